"""Known errors of logging values from a training loop to TensorBoard.

``SummaryWriter.add_scalar(tag, value, step)`` turns ``value`` into a number with
``make_np``: a Python number, a NumPy array or a tensor; anything else it takes for the name of a
caffe2 blob. The message names the type that arrived, and that type says what the loop logged:
a string (a value formatted for printing), None (a metric never computed in this run).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import frames

LOGGED_TYPES = {
    "NoneType": (
        "None",
        "a metric this run never computes (switched off in the config, or computed only on some"
        " steps or in another mode) still has its key in the dict of values logged, with None",
        "skip None values before logging: {k: v for k, v in stats.items() if v is not None}, or"
        " compute the metric (or drop its key) in this configuration",
    ),
    "str": (
        "a string",
        "the value was formatted for printing ('%.4f' % x, f'{x:.2f}') or read from a text log,"
        " and the string was logged",
        "log the number itself: writer.add_scalar(tag, float(value), step)",
    ),
}


def _logging_call(text: str) -> str:
    """The logging call of the user's code that the traceback runs through, else add_scalar."""
    for _, frame in reversed(frames(text)):
        called = re.search(r"\.(add_scalars?|add_histogram|log_metrics?|log)\(", frame.source)
        if called and not frame.in_library:
            return called.group(1)
    return "add_scalar"


def _logged(kind: str, match: re.Match[str], text: str) -> Explanation:
    what, cause, fix = LOGGED_TYPES.get(
        kind,
        (
            f"a {kind}",
            f"a {kind} object reached the logger where a number was meant (a container or an object"
            " of the metric library instead of its value)",
            "log a Python number (float(x), x.item() for a 0-dim tensor)",
        ),
    )
    call = _logging_call(text)
    return answer(
        title=f"TensorBoard got {what} to log as a scalar",
        meaning=(
            f"{call} turns each value into a number (a Python number, a NumPy array or a tensor);"
            f" it was given {what}."
        ),
        cause=f"The dict or value passed to {call} holds {what}: {cause}.",
        fix=f"{fix[:1].upper()}{fix[1:]}.",
    )


def _caffe2_name(match: re.Match[str], text: str) -> Explanation:
    # torch.utils.tensorboard treats a str as a caffe2 blob name and calls workspace.FetchBlob,
    # whose module is not imported in builds without caffe2
    return _logged("str", match, text)


def _unsupported_type(match: re.Match[str], text: str) -> Explanation:
    return _logged(match.group(1).rsplit(".", 1)[-1], match, text)


KNOWN: list[KnownError] = [
    known(
        "tensorboard-value-type",
        r"Got <class '([\w.]+)'>, but numpy array, torch tensor, or caffe2 blob name are expected",
        _unsupported_type,
    ),
    known(
        "tensorboard-value-type",
        r"NameError: name 'workspace' is not defined",
        _caffe2_name,
        when=lambda match, text: bool(re.search(r"FetchBlob|add_scalar|tensorboard", text)),
    ),
]
