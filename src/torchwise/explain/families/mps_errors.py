"""Known errors of Apple's MPS backend that name a dtype its kernel lacks (the MPS errors of
missing operators, float64 and memory are in ``runtime_errors``).

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


KNOWN: list[KnownError] = [
    known(
        "mps-dtype-unsupported",
        r"'?(\w+)(?:\(\))?'? operation does not support input type '(\w+)' in MPS backend",
        _dtype_unsupported,
    ),
]
