"""Known errors of NCCL's own set-up on a machine: a system call that failed (shared memory, peer to
peer, sockets), two ranks on one GPU, a shared-memory segment that could not be made. Split from
``distributed_errors`` (process groups, DDP, the watchdog, the launcher), which they followed in
the table; they keep that place in ``lookup.KNOWN``.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known

# Signs that the job spans several hosts: the launcher's node options, or a peer's address that
# is not this machine's loopback.
_SEVERAL_HOSTS = re.compile(r"--nnodes[= ]*[2-9]|--node[_-]rank|NODE_RANK|(?<![\d.])(?!127\.)\d{1,3}(?:\.\d{1,3}){3}<")


def _nccl_system(match: re.Match[str], text: str) -> Explanation:
    last = fact(text, r"Last error:\s*\n\s*(\S[^\n]*)")
    network = bool(last and re.search(r"socket|Connect|route|refused|timed out", last))
    seen = f" NCCL's last error: {last.strip()}" if last else ""
    reach = (
        "a network interface the ranks cannot reach each other on (a docker or virtual interface,"
        " a firewall)" + (", as the connect error shows" if network else "")
    )
    if network or _SEVERAL_HOSTS.search(text):
        cause = f"NCCL uses {reach}; or containers with too little shared memory; or a broken InfiniBand setup."
    else:
        # nothing in the paste spans hosts: on one machine the calls that fail are shared memory
        # and peer-to-peer transfers between the GPUs
        cause = (
            "On one machine, most often a container with too little shared memory (/dev/shm, which"
            " NCCL uses between the processes), or GPUs that cannot exchange data peer to peer;"
            f" across hosts, {reach}."
        )
    return answer(
        title="NCCL failed in a system call (ncclSystemError)",
        meaning=(
            "A socket, shared-memory or library call inside NCCL failed while setting up or"
            " running a collective." + seen
        ),
        cause=cause,
        fix=(
            "Run once with NCCL_DEBUG=INFO to see the call that failed. In docker use --ipc=host"
            " or a large --shm-size (df -h /dev/shm); NCCL_P2P_DISABLE=1 rules out peer-to-peer."
            " Across hosts name the interface they share: NCCL_SOCKET_IFNAME=eth0 (ip addr lists"
            " them); to rule out InfiniBand try NCCL_IB_DISABLE=1."
        ),
    )


def _duplicate_gpu(match: re.Match[str], text: str) -> Explanation:
    rank, other, bus = match.group(1), match.group(2), match.group(3)
    return answer(
        title=f"Ranks {rank} and {other} were both put on one GPU (PCI bus id {bus})",
        meaning=(
            "NCCL needs one GPU per process; two processes of the group opened the same device"
            f" (NCCL names it by bus id, {bus}, not by index)."
        ),
        cause=(
            "Every process used the default GPU: the script never called"
            " torch.cuda.set_device(local_rank) before init_process_group, or it hard-codes"
            " cuda:0 / a fixed device; or each process sees the same single GPU through"
            " CUDA_VISIBLE_DEVICES; or more processes were started than there are GPUs."
        ),
        fix=(
            "In each process, before init_process_group and before moving the model:\n"
            "    local_rank = int(os.environ[\"LOCAL_RANK\"])\n"
            "    torch.cuda.set_device(local_rank)\n"
            "and wrap with DDP(model, device_ids=[local_rank]); start as many processes as GPUs"
            " (torchrun --nproc-per-node equal to the visible GPU count)."
        ),
    )


def _nccl_shared_memory(match: re.Match[str], text: str) -> Explanation:
    segment = match.group(1) or match.group(3) or ""
    size = match.group(2) or match.group(4)
    named = f" ({segment}, {int(size) / 2**20:.1f} MiB)" if size else ""
    return answer(
        title=f"NCCL could not create its shared-memory segment{named}",
        meaning=(
            "Processes on one machine exchange data through buffers in /dev/shm; NCCL failed to"
            " allocate one: /dev/shm is full or too small."
        ),
        cause=(
            "A container's default /dev/shm is 64 MB (docker), too small for NCCL's buffers; or"
            " /dev/shm is full of stale files from earlier runs."
        ),
        fix=(
            "Give the container more shared memory: docker run --shm-size=1g (or --ipc=host);"
            " in Kubernetes mount an emptyDir with medium: Memory at /dev/shm. df -h /dev/shm"
            " shows what is left. NCCL_SHM_DISABLE=1 works around it, slower."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "nccl-system-error",
        # "NCCL Error 2" is the newer wording: NCCL's result code 2 is ncclSystemError
        r"NCCL [Ee]rror(?: in: \S+| 2:)?,? unhandled system error|ncclSystemError",
        _nccl_system,
        # the summary of a failed call: NCCL's own WARN line above it (shared memory) is the cause
        generic=True,
    ),
    known(
        "nccl-duplicate-gpu",
        r"Duplicate GPU detected : rank (\d+) and rank (\d+) both on CUDA device (\w+)",
        _duplicate_gpu,
    ),
    known(
        "nccl-shared-memory",
        r"Error while creating shared memory segment (\S+) \(size (\d+)\)"
        r"|failed to extend (/dev/shm/\S+) to (\d+) bytes"
        r"|Call to posix_fallocate failed\s*: No space left on device",
        _nccl_shared_memory,
    ),
]
