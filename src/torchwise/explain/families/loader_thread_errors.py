"""Known errors of the DataLoader's pin-memory step: the thread that copies each batch into
page-locked host memory (pin_memory=True) died or raised, or was handed tensors already on the GPU.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

MEANING = (
    "With pin_memory=True a background thread of the DataLoader copies every batch into"
    " page-locked (pinned) host memory so it can move to the GPU asynchronously"
)


def _pin_thread(match: re.Match[str], text: str) -> Explanation:
    caught = match.group(1)
    if caught:
        what = f"that thread raised {caught} (the 'Original Traceback' below the message says where)."
        cause = (
            "Pinning the batch failed: page-locked memory ran out (large batches, many workers"
            " and a high prefetch_factor pin a lot of RAM; small or shared machines have little),"
            " or the batch holds something that cannot be pinned."
        )
    else:
        what = "that thread stopped while the loop still expected batches."
        cause = (
            "The pin-memory thread died: pinned memory or RAM ran out, a worker it reads from was"
            " killed (out of memory, shared memory full), or the iterator was reset while the"
            " thread was still running (persistent_workers with pin_memory at an epoch's end),"
            " or it ran out of file descriptors receiving the workers' batches."
        )
    return answer(
        title="The DataLoader's pin-memory thread failed",
        meaning=f"{MEANING}; {what}",
        cause=cause,
        fix=(
            "Set pin_memory=False in the DataLoader (it only speeds up host-to-GPU copies; the"
            " results are the same), or pin less at a time: fewer num_workers, a lower"
            " prefetch_factor, a smaller batch; when file descriptors run out,"
            " torch.multiprocessing.set_sharing_strategy('file_system') at the top of the script."
        ),
    )


def _pin_cuda_tensor(match: re.Match[str], text: str) -> Explanation:
    kind = match.group(1)
    return answer(
        title=f"pin_memory was given a {kind} already on the GPU",
        meaning=(
            "With pin_memory=True the DataLoader copies each batch into page-locked host memory;"
            f" only CPU tensors can be pinned, and the batch holds a {kind}."
        ),
        cause=(
            "The dataset or collate_fn returns tensors already moved to the GPU (.cuda()/.to(device)"
            " in __getitem__ or on the whole dataset up front) while the DataLoader pins memory; or"
            " a library that builds the DataLoader for you does so (a release with that bug)."
        ),
        fix=(
            "Keep the dataset on the CPU and move each batch in the loop (x.to(device,"
            " non_blocking=True)), or set pin_memory=False when the data already lives on the GPU;"
            " if a library builds the loader, use a release of it without this bug."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "pin-memory-thread",
        r"Pin memory thread exited unexpectedly|Caught (\w+) in pin memory thread",
        _pin_thread,
    ),
    known(
        "pin-memory-cuda-tensor",
        r"cannot pin '(torch\.cuda\.\w+)' only dense CPU tensors can be pinned",
        _pin_cuda_tensor,
    ),
]
