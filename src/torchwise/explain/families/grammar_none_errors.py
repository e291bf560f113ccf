"""A value that is not what a line needs, followed back through the traceback's frames.

* ``cannot unpack non-iterable NoneType object`` (and ``'NoneType' object is not subscriptable``,
  ``'NoneType' object has no attribute 'shape'``) raised in an installed package's line that unpacks,
  indexes or reads an attribute of one plain name (``data, target = sample``, ``img.shape``): that
  name is a parameter the caller's line passed in (``self.get_loss(sample, ...)``), so the None came
  from the caller, and the answer names the frame where it entered.
* ``zip argument #N must support iteration`` (Python before 3.10) at the user's line: the Nth
  argument of the line's one ``zip(...)``; where it is a call, that call returned something that
  is not iterable (None, most often: no return, or a generator whose ``yield`` was removed).

The user's own line unpacking a call's None is ``python_values``' reading; this module reads what
that one leaves: the value's way in from another frame.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import Frame, frames
from torchwise.explain.value_errors import callee, raised_at_user_line

NONE_USED = (
    r"TypeError: (cannot unpack non-iterable NoneType object|'NoneType' object is not subscriptable"
    r"|object of type 'NoneType' has no len\(\))|AttributeError: 'NoneType' object has no attribute '(\w+)'"
)
ZIP = r"TypeError: zip argument #(\d+) must support iteration"


# Loaders that return None instead of raising when the file is missing or unreadable.
SILENT_LOADERS = re.compile(r"(?:^|\.)(?:imread|imdecode)$")


@dataclass(frozen=True)
class PassedIn:
    name: str  # the parameter that was None in the frame that raised
    frame: Frame
    caller: Frame
    value: str  # what the caller's line passed for it


def call_of(source: str, function: str) -> ast.Call | None:
    """The line's call to ``function``, parsed: the shortest text from its name to a ``)`` that is a call."""
    found = re.search(rf"(?<![\w])((?:[A-Za-z_]\w*\.)*{re.escape(function)})\s*\(", source)
    if found is None:
        return None
    for end, char in enumerate(source):
        if char != ")" or end < found.end():
            continue
        try:
            call = ast.parse(source[found.start() : end + 1], mode="eval").body
        except SyntaxError:
            continue
        return call if isinstance(call, ast.Call) else None
    return None


def value_passed(call: ast.Call, name: str) -> str | None:
    """What the call passes for ``name``: the argument of that name, or its one argument that is not a constant."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return ast.unparse(keyword.value)
    values = [*call.args, *(keyword.value for keyword in call.keywords)]
    named = [value for value in values if isinstance(value, ast.Name) and value.id == name]
    if named:
        return name
    # a setting of the same name passed on: cfg_from_yaml_file(args.cfg_file, cfg) fills cfg_file
    same = [value for value in values if isinstance(value, ast.Attribute) and value.attr == name]
    if len(same) == 1:
        return ast.unparse(same[0])
    variables = [value for value in values if not isinstance(value, (ast.Constant, ast.Starred))]
    return ast.unparse(variables[0]) if len(variables) == 1 and not call.keywords else None


def _used_name(match: re.Match[str], source: str) -> str | None:
    if match.group(2):  # .attribute read on a bare name, once on the line
        uses = re.findall(rf"(?<![\w.])([A-Za-z_]\w*)\.{match.group(2)}\b", source)
        return uses[0] if len(uses) == 1 else None
    if match.group(1).startswith("cannot unpack"):
        used = re.match(r"\s*[\w\s,()\[\].*]+?=\s*([A-Za-z_]\w*)\s*$", source)
    elif match.group(1).startswith("object of type"):
        lengths = re.findall(r"\blen\(\s*([A-Za-z_]\w*)\s*\)", source)
        return lengths[0] if len(lengths) == 1 else None
    else:
        used = re.search(r"(?<![\w.])([A-Za-z_]\w*)\s*\[", source)
    return used.group(1) if used else None


def _passed_in(match: re.Match[str], text: str) -> PassedIn | None:
    """The name that was None in the frame that raised, and what the caller's line passed for it."""
    found = frames(text[: match.start()])
    if len(found) < 2:
        return None
    (_, caller), (_, frame) = found[-2], found[-1]
    name = _used_name(match, frame.source)
    if name is None or name == "self":
        return None
    call = call_of(caller.source, frame.function)
    value = value_passed(call, name) if call else None
    if value is None or (not frame.in_library and value == name):
        return None  # the user's own line with the name passed as is: python_values' reading says as much
    return PassedIn(name, frame, caller, value)


def _none_passed(match: re.Match[str], text: str) -> Explanation | None:
    found = _passed_in(match, text)
    if found is None:
        return None
    name, frame, caller, value = found.name, found.frame, found.caller, found.value
    if match.group(2):
        used = f"reads .{match.group(2)} of"
    elif match.group(1).startswith("object of type"):
        used = "takes len() of"
    else:
        used = "unpacks" if match.group(1).startswith("cannot unpack") else "indexes"
    loader = callee(value) if value.endswith(")") else None
    if loader and SILENT_LOADERS.search(loader):
        cause = (
            f"{value} returned None: {loader} does not raise when it cannot read a file, it returns None, so"
            " the image path does not exist (a wrong folder, a relative path from another working directory,"
            " a misspelt name or extension) or the file is not an image it can decode."
        )
        fix = f"Check the path before the call (os.path.exists) and fail loudly: img = {value}; assert img is not None."
    elif loader:
        cause = f"{value} returned None: {loader} has no return (or returns None) on the path taken."
        fix = f"Make {loader} return the value on every path, or check for None at {caller.place}."
    else:
        cause = (
            f"The None came from the caller: where {caller.function} gets {value} (the data iterator or loader"
            " it reads from, a function's return) it received None for this step: a source that yields None"
            " for some items (a dataset whose __getitem__ returns None for a sample it cannot load, a loader"
            " that returns None on failure such as cv2.imread on a path that does not exist, a stage or"
            " process that holds no data, a function without a return on that path)."
        )
        fix = (
            f"Follow {value} back from {caller.place}: print it where it is produced and make that source"
            " return a real value for every step (or skip the items it cannot produce before they reach"
            f" {frame.function})."
        )
    return answer(
        title=f"{name} is None where {frame.place} {used} it: {caller.place} passed it in",
        meaning=(
            f"{frame.place} ({frame.source}) {used} {name}, which is None; it is what {caller.place}"
            f" ({caller.source}) handed to {frame.function}{'' if value == name else f' as {value}'}."
        ),
        cause=cause,
        fix=fix,
    )


def _quoted_line(text: str, before: int) -> Frame | None:
    """Where the paste has no traceback, the line of code a user quoted just above the message."""
    if frames(text):
        return None
    lines = [line for line in text[:before].split("\n") if line.strip()]
    source = lines[-1].strip() if lines else ""
    return Frame("the line quoted above the error", 0, "", source) if "zip(" in source else None


def _zip_argument(match: re.Match[str], text: str) -> tuple[Frame, str] | None:
    frame = raised_at_user_line(match, text) or _quoted_line(text, match.start())
    call = call_of(frame.source, "zip") if frame and frame.source.count("zip(") == 1 else None
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
