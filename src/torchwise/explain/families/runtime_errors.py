"""Known errors raised while a step runs on a device: GPU memory, kernel asserts, GPU libraries
(cuDNN, cuBLAS), half precision on the CPU, and the Apple MPS backend."""

from __future__ import annotations

import re

from torchwise.explain.evidence_gate import loading_frame
from torchwise.explain.evidence_readings import SMALL_GPU_GIB, loading_memory_reading, small_gpu_reading
from torchwise.explain.explanation import Explanation, KnownError, answer, known, sentence
from torchwise.explain.gpu_memory import held_elsewhere
from torchwise.explain.kernel_assertions import ASSERTIONS
from torchwise.explain.paste import evaluation_context, last_frame, user_frame
from torchwise.explain.stated_facts import batch_of_one, batch_of_one_reading


def _out_of_memory(match: re.Match[str], text: str) -> Explanation:
    def amount(*patterns: str) -> str | None:
        for pattern in patterns:
            found = re.search(pattern, text)
            if found:
                return found.group(1)
        return None

    size = r"([\d.]+ [KMGT]?i?B)"
    tried = match.group(1)
    number = amount(r"GPU (\d+)")  # round 9: a GPU the message does not number is not called GPU 0
    gpu = f"GPU {number}" if number else "The GPU"
    total = amount(rf"total capaci?ty of {size}", rf"{size} total capacity")  # torch 2.1 printed "capacty"
    free = amount(rf"of which {size} is free", rf"{size} free")
    unallocated = amount(rf"{size} is reserved by PyTorch but unallocated")
    facts = f"needed {tried} more" if tried else "an allocation failed"
    facts += f", {free} free of {total}" if free and total else ""
    checklist = [
        "halve the batch size (torchwise tune batch-size CONFIG finds the largest that fits)",
        "keep the effective batch with gradient accumulation over several smaller batches",
        "train in mixed precision (torch.autocast with bf16/fp16) to halve activation memory",
        "call optimizer.zero_grad(set_to_none=True)",
        "free references that keep graphs alive: log loss.item(), not loss; validate under"
        " torch.no_grad(); del large tensors you no longer need",
        "torch.cuda.empty_cache() does not free live tensors; it only returns cached blocks"
        " to the driver",
    ]
    cause = (
        "The batch (and the activations kept for backward) is too large for this GPU, or"
        " memory is held by tensors kept from earlier steps, or another process uses the"
        " GPU (see nvidia-smi)."
    )
    elsewhere = held_elsewhere(text, size, total, free)
    evaluating = evaluation_context(text)
    loading = loading_frame(text, match.start())  # round 9: no batch has run while weights load
    if loading and not elsewhere:
        cause, checklist = loading_memory_reading(loading)
    elif elsewhere:
        # round 8: the numbers say the memory is not this torch's: halving the batch cannot help
        cause = (
            f"The message's numbers say most of the GPU is held outside this PyTorch: {elsewhere}. Another"
            " process is using the GPU (an earlier run or a notebook kernel still alive, another job or"
            f" user, or the other ranks of this run, each left on {f'GPU {number}' if number else 'one GPU'} without"
            " torch.cuda.set_device(local_rank)), or a library in this process (TensorFlow, JAX, an"
            " inference engine) took it; the batch is not what filled it."
        )
        checklist.insert(
            0,
            "free the GPU first: nvidia-smi lists the processes holding memory (end the stale ones,"
            " restart the notebook kernel), or run on an idle GPU with CUDA_VISIBLE_DEVICES=<id>;"
            " then, if it still does not fit, the steps below",
        )
    elif evaluating:
        # evaluation keeps no activations when autograd is off; with it on, every forward's
        # graph stays alive as long as its outputs do
        cause = (
            f"This ran while evaluating ({evaluating}), where nothing needs gradients: without"
            " torch.no_grad() every forward still records its graph and keeps the activations,"
            " and outputs kept for the metrics (on the GPU) hold those graphs alive, so memory"
            " grows over the evaluation. Otherwise the evaluation batch or input size is larger"
            " than in training."
        )
        checklist.insert(
            0,
            "run evaluation under torch.no_grad() (or torch.inference_mode()) with model.eval(),"
            " and move what you keep for the metrics to the CPU: preds.append(out.argmax(1).cpu())",
        )
    elif batch_of_one(text):  # after round 9: the paste's own batch size is 1, nothing left to halve
        cause, checklist = batch_of_one_reading(total)
    elif total and _gib(total) <= SMALL_GPU_GIB:  # round 9: the message's own total says the GPU is small
        cause, step = small_gpu_reading(total)
        checklist.insert(0, step)
    if unallocated:
        checklist.append(
            f"{unallocated} is reserved but unallocated (fragmentation): set"
            " PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
        )
    return answer(
        title=f"{gpu} ran out of memory: {facts}",
        meaning="An allocation did not fit in what is left of the GPU's memory.",
        cause=cause,
        fix="\n".join(f"{number}. {step}" for number, step in enumerate(checklist, 1)),
    )


def _device_assert(match: re.Match[str], text: str) -> Explanation:
    for pattern, cause, fix in ASSERTIONS:
        if re.search(pattern, text):
            return answer(
                title=f"A CUDA kernel assertion: {cause}",
                meaning="A check inside a GPU kernel failed; the CUDA context is unusable until restart.",
                cause=sentence(cause),
                fix=sentence(fix) + " CUDA_LAUNCH_BLOCKING=1 makes the error appear at the right line.",
            )
    return answer(
        title="A CUDA kernel hit an assertion (almost always an index out of range)",
        meaning=("A check inside a GPU kernel failed; the CUDA context is unusable until restart."),
        cause=(
            "A class label >= the number of classes (or negative) given to CrossEntropyLoss, or a"
            " token id >= num_embeddings given to nn.Embedding."
        ),
        fix=(
            "Check the labels: assert 0 <= y.min() and y.max() < num_classes. Run the same batch on"
            " the CPU (or with CUDA_LAUNCH_BLOCKING=1) to get the real error at the right line."
        ),
    )


DOCTOR = "torchwise doctor checks that this torch's CUDA build fits the driver and the GPU."


def _cudnn(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="cuDNN could not start (CUDNN_STATUS_NOT_INITIALIZED)",
        meaning=(
            "cuDNN failed to create its handle and workspace, which it does on the first"
            " convolution or RNN call."
        ),
        cause=(
            "Most often the GPU was out of memory at that moment (cuDNN reports it this way"
            " instead of a CUDA out of memory error); otherwise the CUDA build of torch does not"
            " fit the driver or the GPU, or the driver is not loaded."
        ),
        fix=(
            "Rule out memory first: a smaller batch size, and nvidia-smi for other processes on"
            f" the GPU. Then {DOCTOR} Reinstall the CUDA build it names if they do not match."
            " torch.backends.cudnn.enabled = False only hides the problem (and is slower)."
        ),
    )


def _cublas(match: re.Match[str], text: str) -> Explanation:
    if match.group(3):  # torch <= 1.0's wording of CUBLAS_STATUS_EXECUTION_FAILED
        return answer(
            title="A cuBLAS matrix multiply could not run on this GPU",
            meaning="cuBLAS reported that its GPU program failed to execute (THCBlas, torch 1.0 and older).",
            cause=(
                "With these old builds, almost always a GPU newer than the CUDA the torch was built"
                " with: a build for CUDA 9 has no kernels for an RTX 20xx (Turing needs CUDA 10 or"
                " later; an RTX 30xx needs CUDA 11)."
            ),
            fix=(
                "Install a torch built for a CUDA that supports the card (CUDA 10+ for RTX 20xx,"
                " 11+ for RTX 30xx); check with python -c \"import torch; print(torch.version.cuda,"
                " torch.cuda.get_device_name())\"."
            ),
        )
    status, call = match.group(1), match.group(2) or "a cuBLAS call"
    memory = status in ("NOT_INITIALIZED", "ALLOC_FAILED")
    return answer(
        title=f"A cuBLAS matrix multiply failed: CUBLAS_STATUS_{status} in {call}",
        meaning=f"The GPU matrix-multiply library returned CUBLAS_STATUS_{status} for {call}.",
        cause=(
            "The GPU ran out of memory when cuBLAS set up its workspace."
            if memory
            else LATE_INDEX_ERROR
            if _indexing_frame(match, text)
            else "Most often the torch build does not fit this GPU or its driver: a build for an"
            " older CUDA on a newer card (an RTX 30xx or A100 needs CUDA 11+, an RTX 40xx 11.8+),"
            " or a CUDA/driver install that is broken or mixed. Otherwise an earlier error reported"
            " late: an index out of range (an embedding id, a label) in a previous kernel."
        ),
        fix=(
            "Run with CUDA_LAUNCH_BLOCKING=1 (or the same batch on the CPU) to see the real error"
            " at its line. Compare the GPU with the build: python -c \"import torch;"
            " print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())\"; " + DOCTOR
        ),
    )


def _indexing_frame(match: re.Match[str], text: str) -> bool:
    """The frame that raised is an embedding or a loss: an index error reported at the next matmul."""
    frame = last_frame(text, match.start())
    return frame is not None and bool(INDEXING.search(f"{frame.function} {frame.source}"))


INDEXING = re.compile(r"embedding|nll_loss|cross_entropy|gather")
LATE_INDEX_ERROR = (
    "An earlier error reported late: CUDA runs asynchronously, so an index out of range (an"
    " embedding id, a label) in the embedding or loss just before surfaces at the next matmul."
)


def _half_on_cpu(match: re.Match[str], text: str) -> Explanation:
    dtype = match.group(2)
    # a log often shows several ("addmm_impl_cpu_", then "slow_conv2d_cpu"): name them all
    ops = list(dict.fromkeys(re.findall(rf"\"(\w+)\" not implemented for '{dtype}'", text)))
    op = ", ".join(ops)
    return answer(
        title=f"The CPU has no {dtype} kernel for {op}",
        meaning=f'"{op}" has no {dtype} implementation on the CPU: half-precision weights are running on the CPU.',
        cause=(
            "The model was loaded or cast to float16 (model.half(), torch_dtype=torch.float16)"
            " but runs on the CPU: no GPU is visible, the installed torch is a CPU-only build,"
            " or the model and inputs were never moved to 'cuda'."
        ),
        fix=(
            "On the CPU run in float32 (model = model.float(), or drop the .half() call) or in"
            " bfloat16 where the CPU supports it. To use the GPU check torch.cuda.is_available();"
            " if False with an NVIDIA GPU, replace the CPU-only build (torchwise doctor names the"
            " CUDA build to install)."
        ),
    )


def _mps_missing(match: re.Match[str], text: str) -> Explanation:
    op = match.group(1)
    return answer(
        title=f"The operator {op} has no MPS (Apple GPU) implementation in this torch",
        meaning="The Apple GPU backend implements most operators, but not this one in this release.",
        cause=f"The model uses {op}, which this torch version does not run on the MPS device.",
        fix=(
            "Let torch run it on the CPU: start Python with PYTORCH_ENABLE_MPS_FALLBACK=1 set in"
            " the shell (PYTORCH_ENABLE_MPS_FALLBACK=1 python train.py); it is read before"
            " import torch, so setting os.environ later has no effect. Newer releases implement"
            " more operators: upgrade torch. Or run on the CPU."
        ),
    )


def _mps_memory(match: re.Match[str], text: str) -> Explanation:
    allocated, other, allowed, tried = match.groups()
    others = (
        " Other allocations are larger than torch's own: other programs (or another model in"
        " the same process) hold the shared memory."
        if _gib(other) > _gib(allocated)
        else ""
    )
    return answer(
        title=(
            f"The MPS device (Apple GPU) ran out of memory: {allocated} allocated, {other} other,"
            f" {allowed} allowed"
        ),
        meaning=(
            f"torch on MPS may use up to {allowed} of the unified memory; {allocated} is held by"
            f" torch and {other} by everything else, so {tried or 'the next allocation'} did not fit.{others}"
        ),
        cause="The model, batch or image size needs more memory than this Mac lets the GPU use.",
        fix=(
            "Use a smaller batch, image size or model, or half precision (torch.float16); free"
            " what you no longer need (del tensors, torch.mps.empty_cache()); close other"
            " GPU-heavy programs. PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 lifts the cap: set it in"
            " the shell before starting Python (export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0), not"
            " as a function argument; the system may then swap or freeze."
        ),
    )


def _gib(amount: str) -> float:
    """``"5.56 GB"`` / ``"563.62 MiB"`` in GiB, to compare two amounts from one message."""
    number, unit = amount.split()
    return float(number) / (1024 if unit.upper().startswith("M") else 1)


def _mps_float64(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The MPS device (Apple GPU) has no float64",
        meaning="Metal has no 64-bit floats, so a float64 tensor cannot be moved to or made on 'mps'.",
        cause=(
            "The data is float64: NumPy arrays are float64 by default, and torch.from_numpy"
            " keeps that dtype."
        ),
        fix=(
            "Convert to float32 before moving: x.to(\"mps\", torch.float32), or"
            " torch.from_numpy(a).float() when loading; create tensors with dtype=torch.float32."
        ),
    )


def _cuda_unknown(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="CUDA could not start: unknown error",
        meaning="The CUDA runtime failed to initialise the GPU at the first CUDA call.",
        cause=(
            "Usually the NVIDIA unified-memory driver module is in a bad state, most often"
            " after the machine resumed from suspend; sometimes a driver update waiting for a"
            " reboot."
        ),
        fix=(
            "Reload the module (sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm) or reboot;"
            " then nvidia-smi and torchwise doctor should both see the GPU."
        ),
    )


def _no_gpus(match: re.Match[str], text: str) -> Explanation:
    frame = user_frame(text, match.start())
    at = f" (at {frame.place}: {frame.source})" if frame and re.search(r"\.cuda\(|cuda", frame.source) else ""
    return answer(
        title="torch sees no CUDA GPU",
        meaning="The driver answered, but no GPU is visible to this process.",
        cause=(
            f"The code moves something to the GPU unconditionally{at} on a machine or notebook"
            " runtime that has no usable GPU; or CUDA_VISIBLE_DEVICES names a GPU that does not"
            " exist (a script that sets os.environ['CUDA_VISIBLE_DEVICES'] = '1' on a one-GPU"
            " machine); or a container started without GPU access (docker run --gpus all)."
        ),
        fix=(
            "Without a GPU, choose the device instead of hard-coding it: device ="
            " torch.device('cuda' if torch.cuda.is_available() else 'cpu') and .to(device) (or the"
            " script's own --device cpu option). With one, remove or correct CUDA_VISIBLE_DEVICES"
            " (indices start at 0: nvidia-smi -L lists them) and start containers with --gpus"
            " all. torchwise doctor shows what torch sees."
        ),
    )


def _driver_init(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="CUDA could not initialise the NVIDIA driver",
        meaning="torch's first CUDA call asked the driver to start, and it failed: no GPU is usable here.",
        cause=(
            "There is no NVIDIA GPU on this machine (or notebook runtime), or its driver is not"
            " installed or not loaded (nvidia-smi fails too), or a container was started without"
            " GPU access (docker run --gpus all); after a driver update, a reboot is pending."
        ),
        fix=(
            "Run nvidia-smi: if it fails, install or repair the NVIDIA driver (and reboot); in a"
            " container add --gpus all. Without a GPU, run on the CPU (the script's --device cpu,"
            " or torch.device('cuda' if torch.cuda.is_available() else 'cpu'))."
        ),
    )


KNOWN: list[KnownError] = [
    known("cuda-driver-init-failed", r"CUDA driver initialization failed", _driver_init),
    known(
        "cuda-out-of-memory",
        r"(?:CUDA|HIP) (?:error: )?out of memory\.?(?: Tried to allocate ([\d.]+ [KMGT]?i?B))?",
        _out_of_memory,
    ),
    known(
        "device-side-assert",
        # the kernel name may be a full C++ signature (old THCUNN: "void cunn_...(Dtype *, ...)
        # [with Dtype = float]: block: ...")
        r"device-side assert triggered|\.cu:\d+: [^\n]*?block: \[[\d,]+\], thread: \[[\d,]+\] Assertion",
        _device_assert,
        generic=True,
    ),
    known("cudnn-not-initialized", r"CUDNN_STATUS_NOT_INITIALIZED", _cudnn),
    known(
        "cuda-unknown-error",
        r"cuda runtime error \(30\) : unknown error|CUDA unknown error",
        _cuda_unknown,
    ),
    known("no-cuda-gpus", r"No CUDA GPUs are available", _no_gpus),
    known(
        "cublas-failed",
        r"CUBLAS_STATUS_(\w+)(?: when calling `?'?(\w+))?"
        r"|cublas runtime error : (the GPU program failed to execute)",
        _cublas,
        generic=True,
    ),
    known(
        "half-on-cpu",
        r"\"(\w*_cpu\w*|\w+)\" not implemented for '(Half|BFloat16)'",
        _half_on_cpu,
    ),
    known(
        "mps-not-implemented",
        r"The operator \\?'([\w:.]+)\\?' is not current(?:ly)? implemented for the MPS device",
        _mps_missing,
    ),
    known("mps-float64", r"Cannot convert a MPS Tensor to float64 dtype", _mps_float64),
    known(
        "mps-out-of-memory",
        r"MPS backend out of memory \(MPS allocated: ([\d.]+ \w+), other allocations: ([\d.]+ \w+),"
        r" max allowed: ([\d.]+ \w+)\)\.(?: Tried to allocate ([\d.]+ \w+))?",
        _mps_memory,
    ),
]
