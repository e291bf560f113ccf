"""Known errors of Apple's MPS backend: a dtype its kernel lacks, a tensor left on the CPU, a
Metal kernel's own assertion (the MPS errors of missing operators, float64 and memory are in
``runtime_errors``).

MPS kernels cover fewer dtypes than CUDA's: several ops had no int64 kernel on older macOS
releases, and the message names the op and the dtype.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _dtype_unsupported(match: re.Match[str], text: str) -> Explanation:
    op, dtype = match.group(1), match.group(2)
    cast = "int32 (or float)" if dtype.startswith("int") else "float32"
    return answer(
        title=f"The MPS kernel of {op} has no {dtype} version",
        meaning=f"On Apple's GPU (the MPS backend) {op} is implemented for other dtypes, not {dtype}.",
        cause=(
            f"A {dtype} tensor reaches {op} on the mps device: MPS lacked {dtype} for several ops on"
            " older macOS and torch releases."
        ),
        fix=(
            f"Cast the tensor to {cast} before that op (x.to(torch.int32)), or run it on the CPU"
            " (PYTORCH_ENABLE_MPS_FALLBACK=1 sends unsupported ops there); newer macOS and torch"
            " releases add the missing kernels."
        ),
    )


def _placeholder(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="An MPS operation got a tensor that is not on the mps device",
        meaning=(
            "On Apple's GPU every input of an operation must be on the mps device; this one got a"
            " tensor on the CPU (MPS words it as a placeholder with no storage)."
        ),
        cause=(
            "The model is on mps but the batch is not (or the other way round): inputs from a"
            " DataLoader or a data collator stay on the CPU until moved, and tensors created inside"
            " forward without device= are on the CPU."
        ),
        fix=(
            'Move the model and every tensor of the batch to one device: device = torch.device("mps");'
            " model.to(device); batch = {k: v.to(device) for k, v in batch.items()}; create new tensors"
            " with device=x.device. Or run everything on the CPU."
        ),
    )


def _metal_assertion(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A kernel of Apple's MPS backend failed its own assertion",
        meaning=(
            "Metal Performance Shaders, which runs torch's mps operations, stopped the process at a"
            f" check inside one of its kernels: {match.group(1) or 'an assertion'}."
        ),
        cause=(
            "The mps implementation of an operation does not handle these shapes or dtypes (a"
            " limitation or bug of this torch/macOS release), not a problem in the data: the same"
            " code runs on the CPU."
        ),
        fix=(
            "Run that step (or the whole run) on the CPU (device='cpu'), or upgrade torch and macOS,"
            " whose later releases fix many mps kernels."
        ),
    )


KNOWN: list[KnownError] = [
    known("mps-tensor-not-on-device", r"Placeholder storage has not been allocated on MPS device", _placeholder),
    known(
        "mps-kernel-assertion",
        r"(?:MetalPerformanceShaders|MPSNDArray|MPSGraph)[^\n]*?failed assertion `?([^`'\n]*)",
        _metal_assertion,
    ),
    known(
        "mps-dtype-unsupported",
        r"'?(\w+)(?:\(\))?'? operation does not support input type '(\w+)' in MPS backend",
        _dtype_unsupported,
    ),
]
