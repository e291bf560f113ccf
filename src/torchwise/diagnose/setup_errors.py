"""Known errors that come from the install, the machine, or how a script is started.

Where the fix depends on what is installed (which torchvision belongs with this torch, which
CUDA build fits the driver), the installed versions are read from package metadata: torch is
never imported here.
"""

from __future__ import annotations

import re

from torchwise.diagnose.explanation import Explanation, KnownError, answer, known, sentence
from torchwise.env.compat import (
    MINOR_COMPAT_MIN_DRIVER,
    WHEEL_INDEX,
    companion_version,
    cuda_from_driver_code,
    format_version,
    local_tag,
    pick_cuda_build,
    pip_install_torch,
)
from torchwise.env.probe import installed_version

DOCTOR = "torchwise doctor names the exact build for this machine."


def _no_kernel_image(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="This torch build has no GPU code for your GPU's architecture",
        meaning=(
            "CUDA wheels carry compiled kernels for a list of GPU architectures"
            " (torch.cuda.get_arch_list()); your GPU's compute capability is not among them."
        ),
        cause=(
            "A new GPU with an older build (RTX 50xx / B200, sm_100/sm_120, need a CUDA 12.8+"
            " build) or an old GPU with a newer build (GTX 10xx, sm_61, needs CUDA 12.6 or older)."
        ),
        fix=(
            "Compare the GPU with the architectures in the build:\n"
            '    python -c "import torch; print(torch.cuda.get_device_capability(),'
            ' torch.cuda.get_arch_list())"\n'
            "then install a build that lists your sm_XY, e.g. for an RTX 50xx:\n"
            f"    pip install --force-reinstall torch --index-url {WHEEL_INDEX}/cu128\n"
            f"{DOCTOR}"
        ),
    )


def _not_compiled(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="This torch is a CPU-only build",
        meaning=(
            "The code asked for CUDA (.cuda(), device='cuda') but the installed wheel has none."
        ),
        cause=(
            "pip installed the CPU wheel: the default on Windows and macOS, or from the /whl/cpu"
            " index; or the code hard-codes 'cuda' on a machine without an NVIDIA GPU."
        ),
        fix=(
            "With an NVIDIA GPU install a CUDA build:\n"
            f"    pip install --force-reinstall torch --index-url {WHEEL_INDEX}/cu128\n"
            f"{DOCTOR} Without one, choose the device in code:\n"
            "    device = 'cuda' if torch.cuda.is_available() else 'cpu'  # 'mps' on a Mac"
        ),
    )


def _driver_too_old(match: re.Match[str], text: str) -> Explanation:
    cuda = cuda_from_driver_code(int(match.group(1)))
    shown = format_version(cuda)
    torch_version = installed_version("torch") or "0"
    # A driver that reports CUDA X.y is at least the first driver of X, so minor-version
    # compatibility holds for any X.z build.
    build = pick_cuda_build(
        torch_version, driver_cuda=cuda, driver_version=MINOR_COMPAT_MIN_DRIVER.get(cuda[0])
    )
    instead = "."
    if build is not None:
        command = pip_install_torch(build[0], cuda=build[1])
        instead = f", or install the build that fits this driver:\n    {command}"
    return answer(
        title=f"The NVIDIA driver runs CUDA up to {shown}, older than this torch build needs",
        meaning=(
            f"The driver reports version {match.group(1)}, i.e. CUDA {shown}; this torch was built"
            " for a newer CUDA, so it cannot start the GPU."
        ),
        cause="The torch wheel was installed for a newer CUDA than the machine's driver supports.",
        fix=f"Update the NVIDIA driver (https://www.nvidia.com/Download/index.aspx){instead}",
    )


def _torchvision_ops(match: re.Match[str], text: str) -> Explanation:
    torch_version = installed_version("torch")
    vision_version = installed_version("torchvision")
    wanted = companion_version("torchvision", torch_version) if torch_version else None
    tag = local_tag(torch_version or "")
    index = f" --index-url {WHEEL_INDEX}/{tag}" if tag else ""
    installed = (
        f" Installed here: torch {torch_version}, torchvision {vision_version}."
        if torch_version and vision_version
        else ""
    )
    pin = f'"torchvision=={wanted}.*"' if wanted else "torchvision"
    return answer(
        title=(f"torchvision's compiled operators do not load (torchvision::{match.group(1)})"),
        meaning=(
            "torchvision registers its C++ operators (nms, roi_align, ...) when it is imported;"
            " they failed to load, so the operator does not exist." + installed
        ),
        cause=(
            "torchvision was built for another torch release or build (CPU vs CUDA): usually"
            " torch was upgraded or reinstalled from another index without torchvision."
        ),
        fix=(
            "Install the torchvision that belongs with this torch (torchwise doctor checks the"
            f" pair):\n    pip install --force-reinstall --no-deps {pin}{index}"
        ),
    )


SIGNALS = {
    "Bus error": (
        "it ran out of shared memory (/dev/shm), which workers use to hand batches over",
        "give the container more shared memory: docker run --shm-size=8g ... (or --ipc=host);"
        " in Kubernetes mount an emptyDir with medium: Memory at /dev/shm. As a stopgap use"
        " fewer workers or num_workers=0.",
    ),
    "Killed": (
        "the kernel's out-of-memory killer stopped it: the machine ran out of RAM",
        "use fewer workers (each holds a copy of the dataset object), load samples lazily from"
        " disk instead of holding them in memory, or lower prefetch_factor.",
    ),
    "Segmentation fault": (
        "native code crashed inside the worker"
        " (an image or data library, or a fork-unsafe library)",
        "run with num_workers=0 to get the real traceback; try"
        " multiprocessing_context='spawn' on the DataLoader.",
    ),
}


def _worker_killed(match: re.Match[str], text: str) -> Explanation:
    pid, signal = match.group(1), match.group(2).strip()
    cause, fix = SIGNALS.get(
        signal,
        ("the worker process died", "run with num_workers=0 to see the error inside the worker."),
    )
    return answer(
        title=f"A DataLoader worker (pid {pid}) was killed by signal {signal}",
        meaning=f"A worker process that loads batches died from {signal}, so the loader stopped.",
        cause=sentence(cause),
        fix=sentence(fix),
    )


def _cuda_checkpoint_on_cpu(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A checkpoint saved on a GPU is loaded where CUDA is unavailable",
        meaning="torch.load restores each tensor to the device it was saved from, a GPU here.",
        cause="The file was saved with tensors on CUDA and this machine (or torch) has no CUDA.",
        fix=(
            "Tell torch.load where to put the tensors: torch.load(path, map_location='cpu'), or"
            " map_location=device for the device you train on."
        ),
    )


def _weights_only(match: re.Match[str], text: str) -> Explanation:
    found = re.search(r"Unsupported global: GLOBAL ([\w.]+)", text)
    name = found.group(1) if found else None
    what = f" {name}" if name else " a Python object"
    allow = f"[{name}]" if name else "[TheClass]"
    return answer(
        title=f"torch.load refused to unpickle{what}",
        meaning=(
            "Since torch 2.6 torch.load defaults to weights_only=True: it loads tensors and plain"
            " containers only, because unpickling arbitrary objects can run code."
            f" The file holds{what}."
        ),
        cause=(
            "The checkpoint was saved with whole objects (a model, NumPy arrays, a config class)"
            " instead of a state_dict of tensors."
        ),
        fix=(
            "If you trust the file, allow exactly that:"
            f" torch.serialization.add_safe_globals({allow})"
            f" (or with torch.serialization.safe_globals({allow}): torch.load(path)). Only for a"
            " file you trust completely: torch.load(path, weights_only=False). Going forward,"
            " save model.state_dict() (or safetensors), which loads without either."
        ),
    )


def _bootstrapping(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="Worker processes started at import time (missing __main__ guard)",
        meaning=(
            "With the spawn start method (Windows, macOS) each DataLoader worker re-imports your"
            " script; unguarded top-level code starts workers again from inside a worker."
        ),
        cause="The training code runs at the top level of the script, not under a main guard.",
        fix=(
            "Move the code into a function and call it under the guard:\n"
            "    def main():\n"
            "        ...  # build data, model, train\n"
            "\n"
            '    if __name__ == "__main__":\n'
            "        main()"
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "no-kernel-image",
        r"no kernel image is available for execution on the device",
        _no_kernel_image,
    ),
    known("torch-not-compiled-with-cuda", r"Torch not compiled with CUDA enabled", _not_compiled),
    known(
        "driver-too-old",
        r"The NVIDIA driver on your system is too old \(found version (\d+)\)",
        _driver_too_old,
    ),
    known(
        "torchvision-operator-missing",
        r"operator torchvision::(\w+) does not exist",
        _torchvision_ops,
    ),
    known(
        "dataloader-worker-killed",
        r"DataLoader worker \(pid (\d+)\) is killed by signal: ([A-Za-z ]+)",
        _worker_killed,
    ),
    known(
        "cuda-checkpoint-on-cpu",
        r"Attempting to deserialize object on a CUDA device"
        r" but torch\.cuda\.is_available\(\) is False",
        _cuda_checkpoint_on_cpu,
    ),
    known("weights-only-load", r"Weights only load failed", _weights_only),
    known(
        "spawn-bootstrapping",
        r"An attempt has been made to start a new process before the\s+current process has"
        r"\s+finished its bootstrapping phase",
        _bootstrapping,
    ),
]
