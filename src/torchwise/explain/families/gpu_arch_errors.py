"""Known errors of a GPU whose architecture lacks what the code was built or configured for.

Three places say it: the HIP runtime of a ROCm torch ("HIP error: invalid device function": the
wheel carries no kernels for this GPU's gfx target), NVIDIA's ptxas when Triton (torch.compile,
unsloth, xformers, mamba kernels) assembles a kernel ("Feature '.bf16' requires .target sm_80 or
higher": bfloat16 instructions need compute capability 8.0, fp8 8.9), and transformers'
TrainingArguments ("Your setup doesn't support bf16/gpu"), which checks for a bf16-capable GPU.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known, told_apart
from torchwise.explain.paste import last_frame

FP16_INSTEAD = (
    "run in float16 instead: in transformers TrainingArguments(bf16=False, fp16=True) and"
    " from_pretrained(..., torch_dtype=torch.float16); elsewhere the option that picks the"
    " dtype (dtype/precision='16-mixed', torch.autocast(dtype=torch.float16))"
)


def _hip_invalid_device_function(match: re.Match[str], text: str) -> Explanation:
    gfx = fact(text, r"\b(gfx\d{3,4}\w?)\b")
    override = "11.0.0" if gfx and gfx.startswith("gfx11") else "10.3.0"
    named = f" ({gfx})" if gfx else ""
    return answer(
        title=f"The ROCm build of torch has no kernels for this AMD GPU{named}",
        meaning=(
            "A kernel was launched on the GPU but the library holds no code object for its"
            " architecture (gfx target), so HIP finds no function to run. It fails on the first"
            " GPU operation, whatever the model."
        ),
        cause=(
            f"The GPU{named} is not among the gfx targets the ROCm wheel (or the extension) was"
            " compiled for: most consumer Radeon cards and APUs (gfx1031/1032, gfx1102/1103,"
            " gfx1150/1151, older gfx803/gfx90c) are not in the official wheels' target lists."
        ),
        fix=(
            "Tell ROCm to use the nearest supported target: export"
            f" HSA_OVERRIDE_GFX_VERSION={override} (10.3.0 for RDNA2 cards, 11.0.0 for RDNA3) in the"
            " shell that starts Python, before torch is imported; or install a torch/ROCm build"
            " that lists this GPU (rocminfo | grep gfx shows its target)."
        ),
    )


def _ptx_feature(match: re.Match[str], text: str) -> Explanation:
    feature, arch = match.group(1), match.group(2)
    capability = f"{arch[:-1]}.{arch[-1]}"
    low_precision = re.search(r"bf16|e4m3|e5m2|fp8", feature)
    dtype = "bfloat16" if "bf16" in feature else "float8" if low_precision else feature
    return answer(
        title=f"This GPU is older than the kernel needs: {feature} requires compute capability {capability}",
        meaning=(
            f"A GPU kernel generated at run time (Triton, under torch.compile or a library's fused"
            f" kernels) uses {feature}, which NVIDIA GPUs only have from sm_{arch}"
            f" (capability {capability}); ptxas refused to assemble it for this GPU."
        ),
        cause=(
            f"The model or kernels run in {dtype} on a GPU below capability {capability}: a V100"
            " (7.0), T4 or RTX 20xx (7.5), GTX 10xx (6.x); bfloat16 needs an Ampere (A100, RTX"
            " 30xx) or newer GPU, float8 an Ada/Hopper one."
            if low_precision
            else f"The kernel uses an instruction this GPU (below sm_{arch}) does not have."
        ),
        fix=(
            f"On this GPU {FP16_INSTEAD}, or run on a GPU of capability {capability}+;"
            " torch.cuda.get_device_capability() shows this one's."
            if low_precision
            else f"Run on a GPU of capability {capability}+, or without the kernel that needs it"
            " (torch.compile off, the library's non-fused path)."
        ),
    )


# A call into a compiled extension's own kernels: its binding module (_C, _ext, ext_module,
# *_cuda) on the line that raised, or its C++/CUDA sources in the frame's path.
# The error line may name the extension's kernel entry itself ("ROIAlign_forward_cuda").
EXTENSION_CALL = re.compile(
    r"\b(?:_C|_ext|ext_module|_backend|\w+_cuda|\w+_ext)\.\w+\(|[\\/](?:csrc|_ext)[\\/]|\.cu\b"
)
# a project's own CUDA error check, which prints the message where torch prints "CUDA error: ..."
EXTENSION_CHECK = re.compile(
    r"cudaCheckError\(\)[^\n]*|CUDA kernel failed\s*:?|error in [\w.]+\.cu\b[^\n]*|\b\w+\.cu:\d+[^\n]*"
)
EXTENSION_KERNEL = re.compile(r"\b\w+_(?:forward|backward)_cuda\b|\b\w+_cuda_(?:forward|backward)\b")


# GPUs that recent or older torch wheels leave out: Blackwell (sm_100/sm_120, CUDA 12.8+ wheels
# only) and Maxwell/Pascal/Kepler cards that CUDA 12.8+ wheels dropped
OUTSIDE_WHEELS = re.compile(
    r"RTX\s*50[5-9]0|\bB[12]00\b|\bsm_1[02]0\b|GTX\s*(?:9[5-8]0|10[5-8]0)|\bTesla [KMP]\d+|\bK[48]0\b"
)


# torch's own operation (not torch.ops.<extension>): the kernel it launches is in torch's build
TORCH_OP = re.compile(r"\btorch\.(?!ops\b)\w+(?:\.\w+)*\(|\bF\.\w+\(")


def _torch_op(match: re.Match[str], text: str) -> bool:
    """The code line that raised calls a torch operation: the last frame's source line, or a code
    line a paste shows just above the error line."""
    frame = last_frame(text, match.start())
    if frame is not None:
        return bool(TORCH_OP.search(frame.source))
    line_start = text.rfind("\n", 0, match.start())
    above = text[text.rfind("\n", 0, max(line_start, 0)) + 1 : max(line_start, 0)]
    return above.startswith((" ", "\t")) and bool(TORCH_OP.search(above))


def torch_build_evidence(match: re.Match[str], text: str) -> bool:
    """The paste says a failing kernel is torch's own: a GPU the common wheels leave out, or a
    torch operation on the line that raised."""
    return bool(OUTSIDE_WHEELS.search(text)) or _torch_op(match, text)


def extension_launch(match: re.Match[str], text: str) -> tuple[str | None, str] | None:
    """Where the paste shows that the failing kernel was a compiled extension's, not torch's:
    (its package, the evidence quoted), else None. The evidence: its binding module or sources
    in the frame that raised, its kernel named on the error line ("ROIAlign_forward_cuda"), or the
    project's own CUDA error check printing the message (torch prints "CUDA error: ...")."""
    frame = last_frame(text, match.start())
    line_start = text.rfind("\n", 0, match.start()) + 1
    line_end = text.find("\n", match.end())
    named = EXTENSION_KERNEL.search(text[match.end() : line_end if line_end >= 0 else len(text)])
    checked = EXTENSION_CHECK.search(text[line_start : match.start()])
    # torch's own binding (torch._C._cuda_synchronize() in torch/cuda/__init__.py) is no extension:
    # a crash reported there is an earlier kernel's, whoever launched it
    torch_own = frame is not None and (frame.package == "torch" or "torch._C." in frame.source)
    if frame is not None and not torch_own and EXTENSION_CALL.search(f"{frame.file}\n{frame.source}"):
        return frame.package, f"{frame.place}: {frame.source}"
    if named:
        return (frame.package if frame else None), named.group(0)
    if checked:
        return None, f"printed by the project's own CUDA check, {checked.group(0).strip().rstrip(':').strip()}"
    return None


def _extension_without_kernels(match: re.Match[str], text: str) -> Explanation | None:
    """``no kernel image`` or ``invalid device function`` raised inside a compiled extension
    (not torch's own kernels): the extension was built for other GPU architectures. None where
    the paste does not show that the launch was an extension's (torch's own build is then as
    likely, and the message does not tell them apart)."""
    launch = extension_launch(match, text)
    if launch is None:
        return None
    package, where = launch
    extension = f"The extension {package}" if package else "The extension"
    return answer(
        title=f"A compiled extension{f' ({package})' if package else ''} has no kernels for this GPU",
        meaning=(
            f"The kernel that failed to launch is the extension's own ({where}), compiled ahead"
            " of time for a list of GPU architectures (or a CUDA) that does not include this GPU's."
        ),
        cause=(
            f"{extension} was built"
            " (or downloaded prebuilt) for other GPUs or another torch/CUDA:"
            " TORCH_CUDA_ARCH_LIST at build time left this GPU's compute capability out (a wheel"
            " made for older GPUs, or built on a machine with another GPU)."
        ),
        fix=(
            "Rebuild it on this machine for this GPU: set TORCH_CUDA_ARCH_LIST to its capability"
            " (python -c \"import torch; print(torch.cuda.get_device_capability())\", e.g. 8.0)"
            " and reinstall from source with --no-build-isolation --no-cache-dir; or install the"
            " prebuilt wheel made for the installed torch, CUDA and GPU (or the torch it was built for)."
        ),
    )


def _trainer_bf16(match: re.Match[str], text: str) -> Explanation:
    no_gpu = "use_cpu" in match.group(0) and "Ampere" not in match.group(0)
    cause = (
        "torch sees no CUDA GPU (a CPU-only torch build, no GPU on this machine, or"
        " CUDA_VISIBLE_DEVICES hiding it), and bf16=True was asked for a GPU run."
        if no_gpu
        else "The GPU predates Ampere (a V100, T4, RTX 20xx or GTX card), which have no bfloat16"
        " support, while the training arguments (or the script's defaults, a DeepSpeed/accelerate"
        " config) set bf16=True (often tf32=True with it, which also needs Ampere)."
    )
    fix = (
        "Check torch.cuda.is_available(); install a CUDA build of torch, or pass use_cpu=True"
        " (and bf16=False) to train on the CPU."
        if no_gpu
        else f"Set bf16=False (and tf32=False) and {FP16_INSTEAD}; or train on an Ampere or newer GPU."
    )
    if match.group(0).startswith("bf16 mixed precision"):  # accelerate's wording (round 8)
        return answer(
            title="accelerate: bf16 mixed precision was requested but this setup cannot run it",
            meaning="mixed_precision='bf16' (accelerate config, --mixed_precision or a script's option) checks"
            " that torch can run bfloat16 on the device; it cannot here.",
            cause=cause.replace("bf16=True", "bf16 mixed precision"),
            fix="Set mixed_precision='fp16' (and a script's save_precision to fp16) on a GPU older than Ampere,"
            " or 'no' on the CPU; or train on an Ampere or newer GPU.",
        )
    return answer(
        title="transformers: bf16 was requested but this setup has no bf16-capable GPU",
        meaning=("TrainingArguments(bf16=True) checks that torch can run bfloat16 on the GPU; it cannot here."),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "hip-invalid-device-function",
        r"HIP error: invalid device function|hipErrorInvalidDeviceFunction",
        _hip_invalid_device_function,
        re.IGNORECASE,
    ),
    known("ptx-feature-needs-newer-gpu", r"Feature '([^'\n]+)' requires \.target sm_(\d+) or\s+higher", _ptx_feature),
    told_apart(
        "extension-no-kernels",
        r"no kernel image is available for execution on the device|CUDA error: invalid device function\b",
        _extension_without_kernels,
    ),
    known(
        "trainer-bf16-unsupported",
        r"Your setup doesn't support bf16/gpu\.[^\n]*"
        r"|bf16 mixed precision requires PyTorch >= [\d.]+ and a supported device",
        _trainer_bf16,
    ),
]
