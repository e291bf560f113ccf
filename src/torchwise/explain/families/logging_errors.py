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


KNOWN: list[KnownError] = [
    known(
        "tensorboard-string-value",
        r"NameError: name 'workspace' is not defined",
        _string_logged,
        when=lambda match, text: bool(re.search(r"FetchBlob|add_scalar|tensorboard", text)),
    ),
]
