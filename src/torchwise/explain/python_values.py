"""More of Python's type grammar read at the user's own line, for messages no family knows.

Each message names a kind of value and an operation; the source line of the frame that raised
(the user's own) shows the one expression it can be, and only where it can be only one is an
answer given:

* ``'Tensor' object is not callable``: the line calls one name, which holds a tensor (or a
  module file) instead of the function or layer it was meant to;
* ``'NoneType' object is not iterable``: the expression a ``for`` loop or an unpacking reads is None;
* ``unsupported operand type(s) for +: 'NoneType' and 'Tensor'``: the operand that was None;
* ``'method' object is not iterable``: a method passed without calling it (``model.parameters``).

``lookup`` tries these only where no family knows the message. Pure text work.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, answer, known
from torchwise.explain.paste import Frame, last_frame
from torchwise.explain.value_errors import callee, expression_before, raised_at_user_line

KEYWORDS = {"if", "for", "while", "return", "print", "and", "or", "not", "in", "with", "elif", "assert"}
# Methods people pass without calling them, where an iterable is expected.
ITERABLE_METHODS = ("parameters", "named_parameters", "children", "modules", "buffers", "items", "keys", "values")


def _onlycallee(match: re.Match[str], text: str) -> tuple[Frame, str] | None:
    frame = raised_at_user_line(match, text)
    if frame is None:
        return None
    calls = re.finditer(r"[A-Za-z_][\w.]*\s*\(", frame.source)
    callees = {callee(found.group(0)[:-1] + "()") for found in calls}
    callees = {name.strip() for name in callees} - KEYWORDS
    # a dotted callee (x.size(0)) is an attribute of another kind of object, not a reassigned name
    return (frame, callees.pop()) if len(callees) == 1 and "." not in next(iter(callees)) else None


def _not_callable(match: re.Match[str], text: str) -> Explanation:
    kind = match.group(1)
    frame, name = _onlycallee(match, text) or (None, "")
    assert frame is not None
    if kind == "module":
        cause = (f"{name} is a module (a .py file or package), not the function or class of that name inside"
                 f" it: the import brought in the module.")
        fix = (f"Call what the module holds ({name}.<function>(...)), or import the name itself:"
               f" from <package>.{name} import <Name>.")
    else:
        cause = (f"{name} holds a {kind} when {frame.place} runs, not the function or layer it names: the"
                 f" name was reassigned to a result earlier ({name} = {name}(...), or a variable of the same"
                 " name in a loop), or an attribute of that name shadows the method.")
        fix = f"Give the result another name ({name}_value = {name}(...)) so that {name} keeps the callable."
    return answer(
        title=f"{name} is a {kind}, not something to call ({frame.place})",
        meaning=f"{frame.place} ({frame.source}) calls {name}, which is a {kind} object.",
        cause=cause,
        fix=fix,
    )


def _iterated(match: re.Match[str], text: str) -> tuple[Frame, str] | None:
    frame = raised_at_user_line(match, text)
    pattern = r"\s*(?:for\s+.+?\s+in\s+(.+?)\s*:|[\w\s,()\[\].*]+?=\s*(.+?))\s*$"
    found = re.match(pattern, frame.source) if frame else None
    value = (found.group(1) or found.group(2)) if found else None
    return (frame, value) if frame and value and "," not in value.split("(")[0] else None


def _none_iterated(match: re.Match[str], text: str) -> Explanation:
    frame, value = _iterated(match, text) or (None, "")
    assert frame is not None
    if value.endswith(")"):
        cause = (f"{value} is None: {callee(value)} returned nothing on the path taken (a missing return,"
                 " a bare return).")
        fix = f"Make {callee(value)} return the values on every path, or check for None before this line."
    else:
        cause = f"{value} is None: it was never set on this path, or was assigned from a call that returned nothing."
        fix = f"Find where {value} gets its value and make it the iterable it should be before this line."
    return answer(
        title=f"{value} is None where {frame.place} iterates over it",
        meaning=f"{frame.place} ({frame.source}) loops over or unpacks {value}, and it is None.",
        cause=cause,
        fix=fix,
    )


def _none_operand(match: re.Match[str], text: str) -> str | None:
    frame = raised_at_user_line(match, text)
    operator, left, right = match.group(1), match.group(2), match.group(3)
    if frame is None or (left == "NoneType") == (right == "NoneType"):
        return None
    uses = [found for found in re.finditer(rf"\s{re.escape(operator)}=?\s", frame.source)]
    if len(uses) != 1:
        return None
    if left == "NoneType":
        side = expression_before(frame.source.rstrip(), uses[0].start())
    else:
        after = re.match(r"[\w.]+(?:\([^()]*\))?(?:\[[^\]]*\])?", frame.source[uses[0].end():])
        side = after.group(0) if after else ""
    return side or None


def _operand(match: re.Match[str], text: str) -> Explanation:
    frame = raised_at_user_line(match, text)
    side = _none_operand(match, text)
    assert frame is not None and side is not None
    return answer(
        title=f"{side} is None in {frame.place}",
        meaning=f"{frame.place} ({frame.source}) applies {match.group(1)} to {side}, which is None.",
        cause=(f"{side} is None: it was initialised to None and never given a value on this path, or came"
               " from a call that returned nothing."),
        fix=f"Start {side} from a value (0, or the first tensor), or find the call that returns None.",
    )


def _method_passed(match: re.Match[str], text: str) -> str | None:
    frame = raised_at_user_line(match, text) or last_frame(text, match.start())
    methods = "|".join(ITERABLE_METHODS)
    found = re.findall(rf"([\w.\]\[]+\.(?:{methods}))\b(?!\s*\()", frame.source) if frame else []
    return found[0] if len(found) == 1 else None


def _method(match: re.Match[str], text: str) -> Explanation:
    passed = _method_passed(match, text)
    return answer(
        title=f"{passed} is passed without calling it",
        meaning=f"Code iterates over {passed}, which is the method itself, not what it returns.",
        cause=f"The parentheses are missing: {passed} instead of {passed}().",
        fix=f"Call it: {passed}() (for an optimizer, optim.Adam(model.parameters(), lr=...)).",
    )


KNOWN = [
    known("not-callable", r"TypeError: '(\w+)' object is not callable", _not_callable, generic=True,
          when=lambda match, text: _onlycallee(match, text) is not None),
    known("none-iterated", r"TypeError: 'NoneType' object is not iterable", _none_iterated, generic=True,
          when=lambda match, text: _iterated(match, text) is not None),
    known("none-operand", r"TypeError: unsupported operand type\(s\) for ([^:\s]+): '(\w+)' and '(\w+)'", _operand,
          generic=True, when=lambda match, text: _none_operand(match, text) is not None),
    known("method-not-called", r"TypeError: '(?:method|builtin_function_or_method)' object is not iterable",
          _method, generic=True, when=lambda match, text: _method_passed(match, text) is not None),
]
