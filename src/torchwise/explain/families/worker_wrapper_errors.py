"""Known errors of a DataLoader worker whose own traceback the paste does not hold.

An exception raised in a worker process (in the Dataset's ``__getitem__``, its transforms or the
collate function) comes back to the main process re-raised as "X: Caught X in DataLoader worker
process N." followed by "Original Traceback (most recent call last):" and the worker's own
traceback. Where the paste stops before that part, only the exception's type is known, and the
answer can only say where to look: it is generic, so any entry that reads the worker's own error
wins over it.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _worker_error_unseen(match: re.Match[str], text: str) -> Explanation:
    kind, worker = match.group(1), match.group(2)
    return answer(
        title=f"A DataLoader worker raised {kind}; the worker's own traceback is not in the paste",
        meaning=(
            f"Worker process {worker} raised {kind} while making a batch, and the main process re-raised"
            " it; the line that failed is in the 'Original Traceback' printed under this message."
        ),
        cause=(
            f"The Dataset's __getitem__ (or its transforms, or the collate function) raised {kind} for"
            " some sample: a sample whose data or annotation differs from what the code expects (an index"
            " past the end of a list or array, a missing file or key), or a bug in that code."
        ),
        fix=(
            "Read the 'Original Traceback' under the message (it names the file and line), or rerun with"
            " num_workers=0 so the error is raised in the main process with its full traceback; then"
            " print the index and the sample's file to find the data that fails."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "worker-error-unseen",
        r"Caught (\w+) in DataLoader worker process (\d+)",
        _worker_error_unseen,
        generic=True,
        # with the worker's traceback in the paste, the error inside it is what to read
        when=lambda match, text: "Original Traceback" not in text[match.end() :],
    ),
]
