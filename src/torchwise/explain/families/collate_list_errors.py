"""Known errors of default_collate batching samples whose parts differ in length.

``default_collate`` batches a list field by zipping the samples' lists element by element, so
every sample must hold a list of the same length ("each element in list of batch should be of
equal size"); in DataLoader workers it stacks tensors into shared memory sized for the first one
("Trying to resize storage that is not resizable" when a later one is larger). Both are variable-
size samples (boxes per image, tokens per sentence, image sizes) batched by the default collate.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

COLLATE_FN = (
    "Give the DataLoader a collate_fn that keeps variable parts as lists (def collate(batch):"
    " return tuple(zip(*batch)), as detection code does), or pads them to one length"
    " (torch.nn.utils.rnn.pad_sequence, a tokenizer's padding=True / DataCollatorWithPadding);"
    " or make every sample the same size (resize/crop images to one size)."
)


def _list_lengths(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="default_collate got lists of different lengths in one batch",
        meaning=(
            "A sample field is a list, and default_collate batches it element by element, which"
            " needs every sample's list to have the same length; in this batch they differ."
        ),
        cause=(
            "The Dataset returns a variable-length list per sample (boxes or labels per image,"
            " token ids per sentence, a list of frames) and the DataLoader uses the default collate."
        ),
        fix=COLLATE_FN,
    )


def _storage_not_resizable(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="default_collate could not stack samples of different sizes in a DataLoader worker",
        meaning=(
            "In a worker, default_collate allocates shared memory sized for the batch it expects and"
            " stacks the samples' tensors into it; a sample larger than the first does not fit."
        ),
        cause=(
            "The Dataset returns tensors whose size varies between samples (images not resized to"
            " one size, sequences of different lengths, a variable number of objects)."
        ),
        fix=COLLATE_FN,
    )


KNOWN: list[KnownError] = [
    known("collate-list-lengths", r"each element in list of batch should be of equal size", _list_lengths),
    known(
        "collate-storage-not-resizable",
        r"Trying to resize storage that is not resizable",
        _storage_not_resizable,
        # the same words from a tensor over NumPy memory resized in place: answered only in a loader
        when=lambda match, text: bool(re.search(r"collate|DataLoader worker|_worker_loop|fetch\.py", text)),
    ),
]
