"""Known errors of logging a string to TensorBoard.

``SummaryWriter.add_scalar(tag, value, step)`` turns ``value`` into a number with ``make_np``: a
Python number, a NumPy array or a tensor; a string it takes for the name of a caffe2 blob and
fetches it from caffe2's ``workspace``, which builds without caffe2 never imported, so the
message is a NameError about ``workspace``. (Other types, such as None, are named by the message
itself: ``metric_errors``.)
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import frames


def _logging_call(text: str) -> str:
    """The logging call of the user's code that the traceback runs through, else add_scalar."""
    for _, frame in reversed(frames(text)):
        called = re.search(r"\.(add_scalars?|add_histogram|log_metrics?|log)\(", frame.source)
        if called and not frame.in_library:
            return called.group(1)
    return "add_scalar"


def _string_logged(match: re.Match[str], text: str) -> Explanation:
    call = _logging_call(text)
    return answer(
        title="TensorBoard got a string to log as a scalar",
        meaning=(
            f"{call} turns each value into a number (a Python number, a NumPy array or a tensor);"
            " a string it takes for the name of a caffe2 blob, and that lookup fails here."
        ),
        cause=(
            f"The dict or value passed to {call} holds a string: the value was formatted for"
            " printing ('%.4f' % x, f'{x:.2f}') or read from a text log, and the string was"
            " logged."
        ),
        fix="Log the number itself: writer.add_scalar(tag, float(value), step).",
    )


def _not_one_number(match: re.Match[str], text: str) -> Explanation:
    call = _logging_call(text)
    return answer(
        title="TensorBoard got an array of several numbers to log as one scalar",
        meaning=f"{call} logs one number per tag and step; a value it got has more than one element.",
        cause=(
            f"A value given to {call} is an array or tensor of several numbers (a per-class"
            " accuracy, a per-batch list, a metric computed without its mean), not one number."
        ),
        fix=(
            "Log one number: value.mean() (or .item() of a 0-d tensor), or one tag per element"
            " (add_scalars with {f'class_{i}': v for i, v in enumerate(values)})."
        ),
    )


def _old_writer(match: re.Match[str], text: str) -> Explanation:
    method = match.group(1)
    return answer(
        title=f"This SummaryWriter has no {method}: the installed tensorboardX is older",
        meaning=f"The code calls writer.{method}(), which the installed SummaryWriter does not define.",
        cause=f"The installed tensorboardX predates {method} (the code was written for a newer release).",
        fix=(
            "Upgrade tensorboardX (pip install -U tensorboardX), or use torch's own writer: from"
            " torch.utils.tensorboard import SummaryWriter."
        ),
    )

KNOWN: list[KnownError] = [
    known(
        "tensorboard-string-value",
        r"NameError: name 'workspace' is not defined",
        _string_logged,
        when=lambda match, text: bool(re.search(r"FetchBlob|add_scalar|tensorboard", text)),
    ),
    known("tensorboard-not-one-number", r"scalar should be 0D", _not_one_number),
    known(
        "tensorboard-method-missing",
        r"'SummaryWriter' object has no attribute '(add_\w+)'",
        _old_writer,
    ),
]
