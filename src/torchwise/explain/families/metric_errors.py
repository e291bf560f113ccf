"""Known errors of computing and logging metrics: a confusion matrix built with bincount whose
labels hold a class id the matrix has no row for, and a metric value that is None (or another
type) handed to TensorBoard's add_scalar.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known, shape
from torchwise.explain.paste import at_user_line, last_frame


def _bincount_view(match: re.Match[str], text: str) -> bool:
    """The view that failed is of a bincount's result (the line that raised calls bincount)."""
    frame = last_frame(text, match.start())
    return frame is not None and "bincount(" in frame.source


def _confusion_matrix(match: re.Match[str], text: str) -> Explanation:
    sizes = [int(size) for size in re.findall(r"-?\d+", match.group(1))]
    bins = int(match.group(2))
    classes = sizes[0] if sizes and sizes[0] > 0 else None
    frame = last_frame(text, match.start())
    where = f" ({frame.place})" if frame else ""
    # bincount(target * n + pred) has max(target * n + pred) + 1 bins: the largest class id seen
    largest = f" a class id of about {(bins - 1) // classes}" if classes else " a class id"
    return answer(
        title=f"A confusion matrix of {shape(sizes)} got {bins} bins from bincount",
        meaning=(
            "The metric counts (label, prediction) pairs with torch.bincount(label * n + pred,"
            f" minlength=n*n) and views the counts as an n x n matrix{where}. bincount returns"
            " one bin per value up to the largest value it sees, so it returned more than n*n bins"
            f" when a value reached {bins - 1}:{largest}, at or above the n classes the matrix has."
        ),
        cause=(
            "The labels (or predictions) hold class ids the configured number of classes does not"
            " cover: the dataset's ignore/void label (255 in many segmentation sets) was not"
            " masked out, or the config's number of classes is smaller than the dataset's (another"
            " dataset or label mapping)."
        ),
        fix=(
            "Set the number of classes to the dataset's and mask the ignore label before counting"
            " (keep = (target >= 0) & (target < n)); print target.unique() on a batch to see which"
            " ids arrive."
        ),
    )


def _logged_non_number(match: re.Match[str], text: str) -> Explanation:
    kind = match.group(1)
    at = at_user_line(text, match.start())
    if kind == "NoneType":
        cause = (
            "One of the values logged is None: a metric this configuration never computes (left"
            " at its default None), a function that returns nothing, or a dict of metrics with an"
            f" entry that was never filled{at}."
        )
        fix = (
            "Log only values that exist: skip None entries (if value is not None:"
            " writer.add_scalar(key, value, step)), or compute the metric before logging it."
        )
    else:
        cause = (
            f"A value of type {kind} was passed where a number belongs{at}: a string, a list or"
            " another object instead of the metric's value."
        )
        fix = "Pass a Python number or a 0-dim tensor: writer.add_scalar(key, float(value), step)."
    return answer(
        title=f"TensorBoard was given a {kind} to log instead of a number or array",
        meaning=(
            "TensorBoard's SummaryWriter (add_scalar, add_histogram, add_image ...) converts the"
            " value to a NumPy array first; it takes a Python number, a NumPy array or a tensor,"
            f" and got {kind}."
        ),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    # The same message as tensor_errors' "view-size-invalid": this entry is read first and holds
    # only where the failing view is of bincount's counts.
    known(
        "confusion-matrix-classes",
        r"shape '(\[[-\d, ]*\])' is invalid for input of size (\d+)",
        _confusion_matrix,
        when=_bincount_view,
    ),
    known(
        "tensorboard-not-a-number",
        r"Got <class '(\w+)'>, but numpy array, torch tensor, or caffe2 blob name are expected",
        _logged_non_number,
    ),
]
