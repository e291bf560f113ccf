"""Known errors where an operation has no kernel for the tensors it was given: torch's dispatcher
finding no implementation for a backend (a CUDA-only op on CPU tensors, GradScaler's unscale
on the CPU), and apex's mixed precision given a model still on the CPU.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known, told_apart
from torchwise.explain.families.cuda_build_errors import MAC_DEVICE_FIX


def _backend_name(backend: str) -> str:
    """'CPUTensorId' (torch 1.4) and 'CPU' are one backend; 'SparseCPU' stays as it is."""
    return backend.removesuffix("TensorId")


# The namespaces of the operators torch itself registers (a library's are torchvision::, mmcv:: ...).
_TORCH_OWN = frozenset({"aten", "prim", "prims"})


def _torch_without_cuda(operator: str, listed: list[str]) -> tuple[str, str] | None:
    """Cause and fix when one of torch's own operators has no CUDA kernel and lists MPS among the
    backends it has: a macOS build, which has no CUDA. Any other list (or none) does not tell a
    CPU-only wheel from an operator with CPU kernels only, and the answer is "not known"."""
    if "MPS" not in listed or any(b.startswith("CUDA") for b in listed):
        # a CPU-only wheel and an operator with CPU kernels only list the same backends
        return None
    return (
        f"This torch is a macOS build (it lists MPS and no CUDA among {operator}'s backends):"
        " there is no CUDA on a Mac, and the code (or a config, a node, a library default)"
        " asks for a 'cuda' device.",
        MAC_DEVICE_FIX,
    )


def _no_kernel(match: re.Match[str], text: str) -> Explanation | None:
    operator, backend = match.group(1), _backend_name(match.group(2))
    listed = [_backend_name(b.strip()) for b in (match.group(3) or "").split(",") if b.strip()]
    cuda_only = "CUDA" in listed and backend == "CPU"
    if "_amp_" in operator and backend == "CPU":
        cause = (
            "GradScaler (torch.cuda.amp) is unscaling gradients that live on the CPU: the model"
            " is not on the GPU (no .cuda()/.to('cuda'), or CUDA is unavailable and the code fell"
            " back to the CPU) while the scaler is enabled; in that torch its kernel exists for"
            " CUDA only."
        )
        fix = (
            "Move the model to the GPU before building the optimizer (model.to('cuda')), or"
            " turn the scaler off on the CPU: scaler = torch.cuda.amp.GradScaler(enabled="
            "torch.cuda.is_available()) (newer torch: torch.amp.GradScaler('cpu') for CPU AMP)."
        )
    elif operator.startswith("quantized::") and backend == "CPU" and "prepack" in operator:
        # the CPU's quantized kernels come from a quantized engine (fbgemm, qnnpack, onednn)
        cause = (
            f"{operator} packs weights for a quantized engine, and this torch has none that runs"
            " here: the engine selected is not built into this torch for this CPU (an ARM or"
            " Apple-silicon machine needs 'qnnpack'), or convert() ran on a model that was not"
            " moved to the CPU in eval mode first."
        )
        fix = (
            "Call model.cpu().eval() before torch.quantization.convert, and pick an engine this"
            " torch has: print(torch.backends.quantized.supported_engines), then"
            " torch.backends.quantized.engine = 'qnnpack' (ARM) or 'fbgemm' (x86) before prepare."
        )
    elif operator.startswith("quantized::") and backend == "CPU":
        cause = (
            f"A float (not quantized) CPU tensor reached {operator}: the model's input is never"
            " quantized (no QuantStub at the start of forward, or it is not called), or a float"
            " tensor meets a quantized layer in the middle (a DeQuantStub/QuantStub pair missing"
            " around a float op)."
        )
        fix = (
            "Quantize the input where the quantized part starts: self.quant = QuantStub() in"
            " __init__ and x = self.quant(x) first in forward, self.dequant = DeQuantStub() before"
            " the output (and around float-only ops), then prepare and convert again."
        )
    elif cuda_only:
        cause = (
            f"{operator} exists only for CUDA tensors (the message lists the backends it has),"
            " and it was given CPU tensors: the model or the inputs were not moved to the GPU."
        )
        fix = "Move the tensors (and the model) to the GPU before the call, or use a CPU alternative."
    elif backend == "CUDA" and operator.split("::")[0] in _TORCH_OWN:
        # torch's own operators have CUDA kernels in every CUDA build: one listed without CUDA
        # means this torch has none at all, a build question, not the library's or the code's
        found = _torch_without_cuda(operator, listed)
        if found is None:
            return None
        cause, fix = found
    elif backend.startswith("CUDA"):
        cause = (
            f"{operator} was given CUDA tensors, but the library that registers it was built"
            " without CUDA kernels (a CPU-only build of torchvision or of a compiled extension),"
            " or for another CUDA."
        )
        fix = (
            "Install the build of that library that matches torch's CUDA (torchvision from the"
            " same index as torch), or rebuild the extension with CUDA available."
        )
    else:
        cause = (
            f"{operator} has no implementation for {backend} tensors in this torch (a sparse,"
            " quantized or meta tensor, or a device backend it was not built for)."
        )
        fix = f"Convert the inputs to a backend the message lists ({', '.join(listed) or 'dense CPU/CUDA'}) first."
    return answer(
        title=f"{operator} has no kernel for {backend} tensors",
        meaning=(
            "torch picks an operation's implementation by the tensors' backend (device and"
            f" layout); {operator} has none registered for {backend}"
            + (f" (it has: {', '.join(listed)})." if listed else ".")
        ),
        cause=cause,
        fix=fix,
    )


def _apex_model_on_cpu(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="apex amp.initialize was given a model that is not on the GPU",
        meaning=(
            "NVIDIA apex's amp.initialize casts and patches the model for mixed precision on"
            " CUDA; it checks that every parameter is already a CUDA tensor."
        ),
        cause=(
            "amp.initialize(model, optimizer, ...) runs before model.cuda() / model.to('cuda'),"
            " or the script runs on a machine without a GPU (apex amp needs one)."
        ),
        fix=(
            "Move the model first: model = model.to('cuda'); then build the optimizer and call"
            " amp.initialize; better, replace apex with torch's own AMP (torch.autocast and"
            " torch.amp.GradScaler), which apex's amp was merged into."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart(
        "no-kernel-for-backend",
        # the list of backends may be cut short by the paste (no closing bracket)
        r"Could not run '([\w:.]+)' with arguments from the '(\w+)' backend\."
        r"(?:[^\n]*?is only available for these backends: \[([\w, ]+)\]?)?",
        _no_kernel,
    ),
    known(
        "apex-model-on-cpu",
        r"When using amp\.initialize, you need to provide a model with parameters\s+located on a"
        r" CUDA device",
        _apex_model_on_cpu,
    ),
]
