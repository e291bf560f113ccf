"""Known errors of a torch.distributed backend that this torch build or this machine cannot give.

The communication backend is chosen by name (``init_process_group(backend="nccl")``, a
Lightning/accelerate ``strategy="ddp"`` on GPUs) and each one is compiled into torch only for some
platforms: NCCL in the Linux CUDA wheels only (never on Windows or macOS), MPI only in a torch built
from source on a host with MPI, libuv's TCPStore in the Windows wheels of some releases not at all.
The message names the backend that is missing, and the platform says why; NCCL also needs a GPU
visible to the process and CUDA tensors in every collective.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

GLOO = (
    "use the gloo backend, which every torch build has: init_process_group(backend='gloo') (in"
    " Lightning strategy=DDPStrategy(process_group_backend='gloo'), in accelerate/transformers the"
    " env PL_TORCH_DISTRIBUTED_BACKEND / ddp_backend='gloo')"
)


def _not_built_in(match: re.Match[str], text: str) -> Explanation:
    backend = match.group(1)
    if backend.upper() == "NCCL":
        windows = re.search(r"\bWindows\b|[A-Z]:\\|\.dll\b|win32|win_amd64", text, re.IGNORECASE)
        mac = re.search(r"\bmacOS\b|\bMac\b|darwin|\bmps\b|Apple", text, re.IGNORECASE)
        where = "on Windows" if windows else "on macOS" if mac else "on this platform"
        return answer(
            title=f"This torch has no NCCL: the nccl backend is not available {where}",
            meaning=(
                "torch.distributed was asked for the nccl backend (directly, or by a DDP strategy on"
                " GPUs), and this torch build was compiled without it."
            ),
            cause=(
                "NCCL is only in torch's Linux CUDA builds: the Windows and macOS wheels (and any"
                " CPU-only build) have no NCCL, so a script or config written for multi-GPU Linux"
                " training (strategy='ddp', backend='nccl') cannot start here."
            ),
            fix=(
                "On one GPU drop the distributed strategy (no strategy='ddp', no"
                " init_process_group) and train in one process; for several processes here "
                + GLOO
                + "; or run the script on Linux (WSL2 on Windows) with a CUDA build of torch."
            ),
        )
    if backend.upper() == "MPI":
        return answer(
            title="This torch has no MPI backend",
            meaning="torch.distributed was asked for backend='mpi', which this torch build does not contain.",
            cause=(
                "MPI support is only compiled into a torch built from source on a host with an MPI"
                " library; no pip or conda wheel has it."
            ),
            fix=(
                "Use the backend the wheels have: 'nccl' for GPUs on Linux, 'gloo' for CPUs or"
                " Windows/macOS, started with torchrun; or build torch from source with MPI installed."
            ),
        )
    return answer(
        title=f"This torch has no {backend} backend",
        meaning=f"torch.distributed was asked for the {backend} backend, which this torch build was compiled without.",
        cause=f"The installed torch wheel was built without {backend} support (it is optional at build time).",
        fix=(
            "Choose a backend this build has (nccl on Linux GPUs, gloo elsewhere), or install/build a torch"
            f" with {backend}."
        ),
    )


def _nccl_without_gpu(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The nccl backend was started in a process that sees no GPU",
        meaning=(
            "init_process_group(backend='nccl') needs at least one CUDA GPU visible to the process;"
            " torch.cuda.device_count() is 0 here."
        ),
        cause=(
            "The process runs on a machine or container without a visible GPU (CPU-only node,"
            " CUDA_VISIBLE_DEVICES empty or wrong, a CPU-only torch build, a container started"
            " without --gpus), while the script or launcher picks nccl."
        ),
        fix=(
            "Check python -c 'import torch; print(torch.cuda.is_available(), torch.cuda.device_count())'"
            " in the same environment; give the job its GPUs (CUDA_VISIBLE_DEVICES, --gpus all, the"
            " scheduler's GPU request), or for a CPU run " + GLOO + "."
        ),
    )


def _collective_on_cpu(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A collective of the nccl process group was given a CPU tensor",
        meaning=(
            "NCCL only moves CUDA tensors: all_reduce/broadcast/all_gather (or DDP's buffer"
            " broadcast) under the nccl backend got a tensor in CPU memory."
        ),
        cause=(
            "A tensor passed to a torch.distributed call (a metric, a loss value, a count, the"
            " model's buffers before model.to(device)) is still on the CPU, or the model was"
            " wrapped in DistributedDataParallel before it was moved to its GPU."
        ),
        fix=(
            "Move the tensor to this rank's GPU before the call (t = t.to(f'cuda:{local_rank}'),"
            " model.to(local_rank) before DDP(model, device_ids=[local_rank])); for CPU tensors use a"
            " gloo group (init_process_group('cpu:gloo,cuda:nccl') or dist.new_group(backend='gloo'))."
        ),
    )


def _libuv_missing(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="torchrun asked for a libuv TCPStore, which this torch build lacks",
        meaning=(
            "Since torch 2.4 the rendezvous store uses libuv by default; the Windows wheels are"
            " built without it, so the store cannot start."
        ),
        cause="torchrun (or init_process_group with a TCPStore) on a Windows build of torch 2.4 or later.",
        fix=(
            "Turn libuv off for the store: set USE_LIBUV=0 in the environment before torchrun (set"
            " USE_LIBUV=0 in cmd, $env:USE_LIBUV=0 in PowerShell), or pass use_libuv=False in the"
            " init_method (tcp://host:port?use_libuv=0); use the gloo backend on Windows."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "distributed-backend-not-built",
        r"Distributed package doesn'?t have (NCCL|MPI|UCC|Gloo) built in",
        _not_built_in,
        re.IGNORECASE,
    ),
    known("nccl-no-gpus", r"ProcessGroupNCCL is only supported with GPUs, no GPUs found", _nccl_without_gpu),
    known(
        "nccl-cpu-tensor",
        r"Tensors must be CUDA and dense|No backend type associated with device type cpu",
        _collective_on_cpu,
    ),
    known("libuv-not-built", r"use_libuv was requested but PyTorch was buil[dt] without libuv support", _libuv_missing),
]
