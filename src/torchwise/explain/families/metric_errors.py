"""Known errors of metrics computed by counting: a confusion matrix built with ``bincount``.

The idiom ``torch.bincount(target * n + pred, minlength=n * n).view(n, n)`` counts each
(label, prediction) pair; bincount returns ``max(value) + 1`` bins, so the view to ``[n, n]``
fails exactly when a label or prediction is ``n`` or more. The generic reading of the view
message (a hard-coded size) does not fit this line: the size is right, the values are not.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import user_frame


def _counts_pairs(match: re.Match[str], text: str) -> bool:
    frame = user_frame(text, match.start())
    return frame is not None and "bincount(" in frame.source and ".view(" in frame.source


def _confusion_matrix(match: re.Match[str], text: str) -> Explanation:
    classes = [int(size) for size in re.findall(r"\d+", match.group(1))]
    n, bins = classes[0], int(match.group(2))
    frame = user_frame(text, match.start())
    assert frame is not None  # the guard saw it
    label = (bins - 1) // n
    return answer(
        title=f"A confusion matrix for {n} classes counted a class id of about {label} ({frame.place})",
        meaning=(
            f"bincount(target * {n} + pred) returns one bin per value up to the largest, here"
            f" {bins} bins instead of {n}x{n} = {n * n}: some label (or prediction) is {n} or"
            f" more, the largest near {label}."
        ),
        cause=(
            f"The labels hold ids outside 0..{n - 1} that the metric does not mask: a void or"
            " 'ignore' label (255 in many segmentation datasets) other than the ignore_label the"
            f" code masks, or a dataset with more classes than the {n} the config sets."
        ),
        fix=(
            f"Print target.unique() before the metric; set the config's ignore label (or number of"
            f" classes) to the dataset's, or mask every id outside the range: keep = (target >= 0)"
            f" & (target < {n})."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "confusion-matrix-classes",
        r"shape '\[(\d+), ?\1\]' is invalid for input of size (\d+)",
        _confusion_matrix,
        when=_counts_pairs,
    ),
]
