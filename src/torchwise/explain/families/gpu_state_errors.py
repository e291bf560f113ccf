"""Known errors of a GPU that the operating system or another process holds back.

Three CUDA messages name their cause in the driver's own words:

- "the launch timed out and was terminated": a kernel ran longer than the display driver's
  watchdog allows (Windows TDR, about 2 s; an X server on Linux), on a GPU that also drives a screen;
- "CUDA-capable device(s) is/are busy or unavailable": the GPU is in exclusive-process compute mode
  and another process holds it, or it is not usable (a MIG or container setup, a GPU in error);
- "cuDNN version incompatibility: PyTorch was compiled against X but found runtime version Y":
  another cuDNN earlier on the library path than the one torch ships;
- "Unable to find a valid cuDNN algorithm to run convolution": no algorithm got its workspace, which
  is almost always a GPU whose memory is taken.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _launch_timeout(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A GPU kernel was stopped by the display driver's watchdog",
        meaning=(
            "The driver killed a kernel that ran longer than the time a GPU driving a display may"
            " be busy (Windows TDR: about 2 seconds; an X server's watchdog on Linux); the CUDA"
            " context is lost and the process must restart."
        ),
        cause=(
            "Training or inference runs on the GPU that also drives the screen, and one kernel (a"
            " large batch, a big matmul or convolution, a long custom kernel) takes longer than the limit."
        ),
        fix=(
            "Make each kernel shorter (a smaller batch or input size), or run on a GPU without a"
            " display (a second GPU, the integrated GPU for the screen, a server without X); on"
            " Windows the limit can be raised with the TdrDelay registry value (TdrLevel/TdrDelay,"
            " then reboot), on Linux by stopping the X server for training."
        ),
    )


def _busy(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The GPU is busy or unavailable to this process",
        meaning="The CUDA driver refused to create a context on the GPU.",
        cause=(
            "The GPU is in exclusive-process compute mode and another process (a previous run that"
            " is still alive, another user's job, a notebook kernel) already holds it; or it is not"
            " usable here (a GPU in an error state, a container or VM without proper access, a MIG"
            " setup the process is not given)."
        ),
        fix=(
            "Run nvidia-smi: kill the process that holds the GPU (or wait for it), pick a free GPU"
            " with CUDA_VISIBLE_DEVICES, or set the compute mode back to default (nvidia-smi -c 0, as"
            " root); if the GPU shows an error, reset it (nvidia-smi -r) or reboot."
        ),
    )


def _cudnn_version(match: re.Match[str], text: str) -> Explanation:
    built, found = match.group(1), match.group(2)
    return answer(
        title=f"torch was built for cuDNN {built} but loaded cuDNN {found}",
        meaning=(
            f"At its first cuDNN call torch checks the cuDNN library it loaded (version {found})"
            f" against the one it was compiled for ({built}); they are not compatible."
        ),
        cause=(
            "Another cuDNN comes first on the library path: a system or CUDA-toolkit cuDNN in"
            " LD_LIBRARY_PATH (or PATH on Windows), a conda cudnn package, or a pip nvidia-cudnn"
            " package of another version, loaded instead of the one torch's wheel brings."
        ),
        fix=(
            "Let torch load its own cuDNN: remove the other cuDNN's folder from LD_LIBRARY_PATH (or"
            " PATH), or install the nvidia-cudnn version torch requires (pip show torch lists it;"
            " pip install -U torch reinstalls it); python -c 'import torch;"
            " print(torch.backends.cudnn.version())' checks it."
        ),
    )


def _cudnn_no_algorithm(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="cuDNN found no convolution algorithm it could run",
        meaning=(
            "cuDNN tries its convolution algorithms for these shapes and each needs some GPU memory as"
            " workspace; none could run."
        ),
        cause=(
            "Usually the GPU's memory is (nearly) exhausted, so no algorithm gets its workspace: a batch or"
            " input too large, or another process on the same GPU; less often the installed torch's"
            " cuDNN/CUDA build does not support this GPU (a new card with an old torch build)."
        ),
        fix=(
            "Lower the batch size or input size (check nvidia-smi for other processes on that GPU, pick a"
            " free one with CUDA_VISIBLE_DEVICES); if memory is free, install a torch build for this GPU's"
            " CUDA generation (pytorch.org's selector), or test with torch.backends.cudnn.enabled = False."
        ),
    )


KNOWN: list[KnownError] = [
    known("cuda-launch-timeout", r"the launch timed out and was terminated|cudaErrorLaunchTimeout", _launch_timeout),
    known(
        "cuda-device-busy",
        r"CUDA-capable device\(s\) is/are busy or unavailable|all CUDA-capable devices are busy or unavailable"
        r"|cudaErrorDevicesUnavailable",
        _busy,
    ),
    known(
        "cudnn-version-mismatch",
        r"cuDNN version (?:incompatibility|mismatch): PyTorch was compiled\s+against (\([\d, ]+\)|[\d.]+) but"
        r" (?:found runtime version|linked against) (\([\d, ]+\)|[\d.]+)",
        _cudnn_version,
    ),
    known(
        "cudnn-no-algorithm",
        r"Unable to find a valid cuDNN algorithm to run convolution|no valid convolution algorithms available in CuDNN",
        _cudnn_no_algorithm,
    ),
]
