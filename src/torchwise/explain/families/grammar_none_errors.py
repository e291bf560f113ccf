"""A value that is not what a line needs, followed back through the traceback's frames.

* ``cannot unpack non-iterable NoneType object`` (and ``'NoneType' object is not subscriptable``)
  raised in an installed package's line that unpacks or indexes one plain name (``data, target =
  sample``): that name is a parameter the caller's line passed in (``self.get_loss(sample, ...)``),
  so the None came from the caller, and the answer names the frame where it entered.
* ``zip argument #N must support iteration`` (Python before 3.10) at the user's line: the Nth
  argument of the line's one ``zip(...)``; where it is a call, that call returned something that
  is not iterable (None, most often: no return, or a generator whose ``yield`` was removed).

The user's own line unpacking a call's None is ``python_values``' reading; this module reads what
that one leaves: the value's way in from another frame.
"""

from __future__ import annotations

import ast
import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import Frame, frames
from torchwise.explain.value_errors import callee, raised_at_user_line

NONE_USED = r"TypeError: (cannot unpack non-iterable NoneType object|'NoneType' object is not subscriptable)"
ZIP = r"TypeError: zip argument #(\d+) must support iteration"


def _passed_in(match: re.Match[str], text: str) -> tuple[str, Frame, Frame] | None:
    """(the name, the library frame that raised, the caller that passed the name in)."""
    found = frames(text[: match.start()])
    if len(found) < 2:
        return None
    (_, caller), (_, frame) = found[-2], found[-1]
    if not frame.in_library:
        return None
    if match.group(1).startswith("cannot unpack"):
        used = re.match(r"\s*[\w\s,()\[\].*]+?=\s*([A-Za-z_]\w*)\s*$", frame.source)
    else:
        used = re.search(r"(?<![\w.])([A-Za-z_]\w*)\s*\[", frame.source)
    name = used.group(1) if used else None
    if name is None or name == "self":
        return None
    call = re.search(rf"\b{re.escape(frame.function)}\s*\(([^\n]*)\)", caller.source)
    passed = call is not None and re.search(rf"(?<![\w.=])\b{re.escape(name)}\b(?!\s*=)", call.group(1))
    return (name, frame, caller) if passed else None


def _none_passed(match: re.Match[str], text: str) -> Explanation | None:
    found = _passed_in(match, text)
    if found is None:
        return None
    name, frame, caller = found
    used = "unpacks" if match.group(1).startswith("cannot unpack") else "indexes"
    return answer(
        title=f"{name} is None where {frame.place} {used} it: {caller.place} passed it in",
        meaning=(
            f"{frame.place} ({frame.source}) {used} {name}, which is None; {name} is what {caller.place}"
            f" ({caller.source}) handed to {frame.function}."
        ),
        cause=(
            f"The None came from the caller: where {caller.function} gets {name} (the data iterator or loader"
            " it reads from, a function's return) it received None for this step: a source that yields None"
            " for some items (a dataset whose __getitem__ returns None for a sample it cannot load, a stage"
            " or process that holds no data, a function without a return on that path)."
        ),
        fix=(
            f"Follow {name} back from {caller.place}: print it where it is produced and make that source"
            " return a real value for every step (or skip the items it cannot produce before they reach"
            f" {frame.function})."
        ),
    )


def _quoted_line(text: str, before: int) -> Frame | None:
    """Where the paste has no traceback, the line of code a user quoted just above the message."""
    if frames(text):
        return None
    lines = [line for line in text[:before].split("\n") if line.strip()]
    source = lines[-1].strip() if lines else ""
    return Frame("the line quoted above the error", 0, "", source) if "zip(" in source else None


def _zip_call(source: str) -> ast.Call | None:
    """The line's one zip(...) call, parsed: the shortest text from ``zip(`` to a ``)`` that is a call."""
    if source.count("zip(") != 1:
        return None
    start = source.index("zip(")
    for end, char in enumerate(source):
        if char != ")" or end < start:
            continue
        try:
            call = ast.parse(source[start : end + 1], mode="eval").body
        except SyntaxError:
            continue
        return call if isinstance(call, ast.Call) else None
    return None


def _zip_argument(match: re.Match[str], text: str) -> tuple[Frame, str] | None:
    frame = raised_at_user_line(match, text) or _quoted_line(text, match.start())
    call = _zip_call(frame.source) if frame else None
    number = int(match.group(1))
    if frame is None or call is None or number > len(call.args) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    argument = call.args[number - 1]
    return (frame, ast.unparse(argument)) if isinstance(argument, ast.Call) else None


def _zip_reading(match: re.Match[str], text: str) -> Explanation | None:
    found = _zip_argument(match, text)
    if found is None:
        return None
    frame, argument = found
    function = callee(argument)
    return answer(
        title=f"{argument} is not iterable where zip reads it ({frame.place})",
        meaning=f"zip's argument #{match.group(1)} on {frame.place} ({frame.source}) is {argument}, and what it"
        " returned cannot be iterated.",
        cause=(
            f"{function} returned a single value instead of an iterable: None, most often (a path without a"
            " return, or a generator function whose yield was removed or commented out, which makes it an"
            " ordinary function returning None), or one object where a list was meant."
        ),
        fix=f"Make {function} return (or yield) the items on every path; print(type({argument})) shows what"
        " it gives.",
    )


KNOWN: list[KnownError] = [
    told_apart("none-passed-in", NONE_USED, _none_passed, generic=True),
    told_apart("zip-argument-not-iterable", ZIP, _zip_reading, generic=True),
]
