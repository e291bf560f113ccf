"""Known errors of GPU peer-to-peer access and of replicating a module over several GPUs.

CUDA lets a GPU open at most eight peer (P2P) connections, system-wide: a process that enables
peer access among more than eight GPUs (DataParallel over 10 cards, NCCL or accelerate with more
than eight local GPUs, several libraries each opening connections) fails with "peer mapping
resources exhausted" (cudaErrorTooManyPeers, "cuda runtime error (60)", CUDA_ERROR_TOO_MANY_PEERS).

DataParallel, and DistributedDataParallel before torch 1.10 when given several or no device_ids,
copy the module from device_ids[0] to the other GPUs with torch.cuda.comm.broadcast_coalesced,
which requires every parameter and buffer to sit on the first of those devices ("all tensors must
be on devices[0]").
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known


def _too_many_peers(match: re.Match[str], text: str) -> Explanation:
    count = fact(text, r"num_processes:\s*(\d+)") or fact(text, r"found (\d+) CUDA devices")
    seen = f" (this run uses {count})" if count and int(count) > 8 else ""
    return answer(
        title="CUDA peer-to-peer access ran out of connections: more than 8 GPUs are peered",
        meaning=(
            "Each GPU can hold at most eight peer (P2P) connections, counted over the whole"
            " system; enabling one more fails, so the GPUs cannot map each other's memory."
        ),
        cause=(
            f"The job peers more than eight GPUs{seen}: DataParallel or one process over 9+ GPUs,"
            " NCCL/accelerate/DeepSpeed with more than eight local GPUs in one group, or several"
            " libraries in the process each opening peer connections (then it can fail with fewer"
            " GPUs)."
        ),
        fix=(
            "Use at most 8 GPUs per node (CUDA_VISIBLE_DEVICES, or num_processes / nproc-per-node"
            " <= 8), one process per GPU (DDP with torchrun rather than DataParallel), or disable"
            " peer access for NCCL with NCCL_P2P_DISABLE=1 (slower copies through the host)."
        ),
    )


def _replica_not_on_first_device(match: re.Match[str], text: str) -> Explanation:
    ddp = re.search(r"DistributedDataParallel|distributed\.py|torch\.distributed\.launch|torchrun", text)
    if ddp:
        cause = (
            "DistributedDataParallel was built without device_ids (or with several), so this torch"
            " replicates the module over every visible GPU starting at the first one, but"
            " model.cuda() put the model on this process's current device, which is not that"
            " first GPU."
        )
        fix = (
            "One GPU per process: torch.cuda.set_device(local_rank); model.cuda(local_rank);"
            " DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)"
            " (device_ids=[torch.cuda.current_device()])."
        )
    else:
        cause = (
            "nn.DataParallel copies the model from device_ids[0], but the model's parameters (or"
            " some of them, or a buffer) are on another device: the model was moved to cuda:0"
            " while device_ids starts at another GPU (device_ids=[1, 2]), or part of it stayed"
            " on the CPU or another GPU."
        )
        fix = (
            "Move the whole model to the first listed GPU before wrapping:"
            " model.to(f'cuda:{device_ids[0]}'); or pick the GPUs with"
            " CUDA_VISIBLE_DEVICES=1,2 and keep device_ids=[0, 1]."
        )
    return answer(
        title="The module to replicate is not on the first GPU of device_ids",
        meaning=(
            "Replicating a module over several GPUs broadcasts its parameters and buffers from"
            " device_ids[0]; some of them were on another device."
        ),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "cuda-too-many-peers",
        r"peer mapping resources exhausted|CUDA_ERROR_TOO_MANY_PEERS|cudaErrorTooManyPeers",
        _too_many_peers,
    ),
    known(
        "replica-not-on-first-device",
        r"all tensors must be on devices\[0\]",
        _replica_not_on_first_device,
        re.IGNORECASE,
    ),
]
