"""Known errors raised by a check in the user's own code, read from the line that raised: a bare
``assert`` whose condition the traceback shows, and a NumPy array's ``.size`` or ``.shape``
called as if it were a tensor's method.

As in ``user_code_errors``, the message alone names no cause: the entry answers only where the
last frame is the user's own line and its source is the check (``paste.user_frame``).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known, sentence
from torchwise.explain.families.user_code_errors import frame_of, raised_here

# What a failed condition says, by its shape: (pattern over the condition, cause, fix).
CONDITIONS = [
    (
        r"os\.path\.(?:exists|isdir|isfile)\((.+)\)$",
        "the path in {0} does not exist (or is not the kind of path the check wants): a wrong"
        " or relative path, a shell glob like *.jpg given where a folder is expected, or data"
        " not downloaded yet",
        "pass an existing path (ls it first; a folder, not a glob, where the code expects a"
        " folder), relative to the directory the script runs from",
    ),
    (
        r"(.+?)\s*%\s*(.+?)\s*==\s*0$",
        "the size {0} is not a multiple of {1}: an input size the model's strides or patches do not"
        " divide (an image or crop size other than the one the project uses)",
        "use sizes that {1} divides (resize or pad the inputs to such a size, or change the"
        " crop/patch size in the config)",
    ),
    (
        r"torch\.cuda\.is_available\(\)$",
        "this torch sees no GPU (a CPU-only build, or no driver), and the project requires one",
        "run on a machine with a GPU and a CUDA build of torch (torchwise doctor checks both)",
    ),
    (
        r"len\((.+?)\)\s*==\s*len\((.+?)\)$",
        "the lists {0} and {1} have different lengths: two lists that must pair up (images and labels,"
        " files and annotations) do not",
        "check how both are built (a missing or extra file, a filter applied to one only)",
    ),
]


def _is_assert(match: re.Match[str], text: str) -> bool:
    frame = frame_of(match, text)
    return frame is not None and raised_here(match, text) and frame.source.startswith("assert")


def _assert_failed(match: re.Match[str], text: str) -> Explanation:
    frame = frame_of(match, text)
    assert frame is not None  # the guard saw it
    condition = re.sub(r"^assert\b\s*", "", frame.source).split(",")[0].strip()
    if condition.startswith("(") and condition.endswith(")"):
        condition = condition[1:-1].strip()
    cause = (
        f"the values at that line do not meet the condition the code requires ({condition}):"
        " an input, a setting or a file differs from what the project expects"
    )
    fix = (
        f"print the operands of {condition} just before the line to see which one is off, and"
        " change the input or the setting it comes from"
    )
    for pattern, said, advice in CONDITIONS:
        found = re.search(pattern, condition)
        if found:
            cause, fix = said.format(*found.groups()), advice.format(*found.groups())
            break
    return answer(
        title=f"The project's own check failed: assert {condition} ({frame.place})",
        meaning=(
            f"A bare AssertionError is raised by an assert statement; at {frame.place} the code"
            f" checks {condition}, and it was False. torch raised nothing."
        ),
        cause=sentence(cause),
        fix=sentence(fix),
    )


def _array_method(match: re.Match[str], text: str) -> bool:
    frame = frame_of(match, text)
    return (
        frame is not None
        and raised_here(match, text)
        and re.search(r"[\w.\]]+\.(?:size|shape)\(", frame.source) is not None
    )


def _size_called(match: re.Match[str], text: str) -> Explanation:
    frame = frame_of(match, text)
    assert frame is not None  # the guard saw it
    found = re.search(r"([\w.\]\[]+)\.(size|shape)\(", frame.source)
    assert found is not None
    name, attribute = found.group(1), found.group(2)
    return answer(
        title=f"{name} is not a tensor: its .{attribute} is a value, not a method ({frame.place})",
        meaning=(
            f"{name}.{attribute}(...) calls what {name}.{attribute} holds; for a tensor that is a"
            f" method, but here it is {'an int' if match.group(1) == 'int' else 'a tuple'}"
            + (" (a NumPy array's .size is its element count)." if attribute == "size" else ".")
        ),
        cause=(
            f"{name} is a NumPy array (or another non-tensor) where the code expects a torch"
            " tensor: the caller passes the wrong argument, or the data was never converted"
            " (np.load, a dataset returning arrays, features read from a file)."
        ),
        fix=(
            f"Convert it before the call: {name} = torch.from_numpy({name}) (then .to(device)),"
            f" or use the array's own attributes ({name}.shape[0]); check what the caller passes."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "assert-failed",
        r"^\s*AssertionError\s*$",
        _assert_failed,
        re.MULTILINE,
        generic=True,
        when=_is_assert,
    ),
    known(
        "array-method-called",
        r"TypeError: '(int|tuple)' object is not callable",
        _size_called,
        generic=True,
        when=_array_method,
    ),
]
