"""Python's type grammar read with the frame that raised, for messages no family knows.

Three messages say what kind of value arrived where another was needed, and the traceback's
last frame says where:

* ``'NoneType' object has no attribute 'x'`` raised at the user's own line: the expression
  before ``.x`` in that line's source is the value that was None, quoted back; a ``.grad`` that
  is None is a parameter that got no gradient.
* ``cannot unpack non-iterable NoneType object`` at the user's line: the right-hand side of the
  unpacking returned None.
* ``f(): argument 'input' (position 1) must be Tensor, not list`` and ``f() received an invalid
  combination of arguments - got (list, ...)``: what was passed against what torch expects, and
  the conversion for that pair.

``lookup`` tries these only where no family knows the message. Pure text work.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, answer, known
from torchwise.explain.paste import Frame, frames, last_frame, user_frame

# What torch says a value was -> what it usually is in training code, and how to make a tensor of it
CONVERSIONS = {
    "list": ("a Python list (a Dataset or collate_fn that returns lists, or a module that returns a list"
             " of outputs)", "torch.stack(values) for a list of tensors, torch.tensor(values) for numbers"),
    "tuple": ("a tuple: several values travelling together, such as a module's several outputs (an LSTM"
              " or GRU returns (output, (h, c)), a function that returns two values), a batch field that"
              " carries (data, lengths), or a trailing comma (x = f(x), makes a tuple)",
              "take the element the call needs (output, _ = lstm(x); outputs[0])"),
    "numpy.ndarray": ("a NumPy array", "torch.from_numpy(array) (then .float() for float64 data, .to(device))"),
    "ndarray": ("a NumPy array", "torch.from_numpy(array) (then .float() for float64 data, .to(device))"),
    "NoneType": ("None: an earlier step returned nothing (a function without a return, a forward"
                 " that returns None on some path)", "find where the value is made and return the tensor"),
    "int": ("a Python number", "torch.tensor(value) (or pass the tensor the number was taken from)"),
    "float": ("a Python number", "torch.tensor(value) (or pass the tensor the number was taken from)"),
    "str": ("a string: the data holds text or paths that were never turned into numbers",
            "convert in the Dataset (load the file, map labels to ids) before batching"),
    "dict": ("a dict: a batch or a model output with named fields", "pass the field the call needs (batch['input'])"),
}


def raised_at_user_line(match: re.Match[str], text: str) -> Frame | None:
    frame = user_frame(text, match.start())
    return frame if frame is not None and last_frame(text, match.start()) == frame and frame.source else None


def expression_before(source: str, end: int) -> str:
    """The expression that ends at ``end`` in ``source``: names, dots, calls and subscripts,
    read backwards with brackets balanced (``model(x).logits`` in ``model(x).logits.mean()``)."""
    depth, start = 0, end
    while start > 0:
        char = source[start - 1]
        if char in ")]":
            depth += 1
        elif char in "([":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and not (char.isalnum() or char in "_."):
            break
        start -= 1
    return source[start:end].strip()


def callee(expression: str) -> str:
    """``load_data`` of ``load_data(path, train)``: the function an expression calls last."""
    if not expression.endswith(")"):
        return expression
    depth = 0
    for position in range(len(expression) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(expression[position], 0)
        if depth == 0:
            return expression_before(expression, position) or expression
    return expression


def _none_attribute_expression(match: re.Match[str], text: str) -> str | None:
    frame = raised_at_user_line(match, text)
    if frame is None:
        return None
    uses = [found.start() for found in re.finditer(rf"\.{re.escape(match.group(1))}\b", frame.source)]
    if len(uses) != 1:
        return None  # two uses on one line: which one was None is not readable
    expression = expression_before(frame.source, uses[0])
    return expression if re.match(r"[A-Za-z_]", expression) else None


def _none_attribute(match: re.Match[str], text: str) -> Explanation:
    frame = raised_at_user_line(match, text)
    expression = _none_attribute_expression(match, text)
    assert frame is not None and expression is not None
    attribute = match.group(1)
    if expression.endswith(".grad"):
        cause = (
            f"{expression} is None: that parameter got no gradient, because it did not take part in the"
            " loss (an unused layer or branch), it has requires_grad=False (frozen), backward() has not"
            " run yet, or zero_grad(set_to_none=True) cleared it."
        )
        fix = "Skip parameters without a gradient (if p.grad is not None: ...), or make the layer part of the loss."
    elif expression.endswith(")"):
        called = callee(expression)
        cause = (
            f"{expression} returned None: {called} has no return on the path taken (or returns None"
            " on failure, like cv2.imread on a wrong path), or is an in-place method that returns None."
        )
        fix = f"Make {called} return the value (check every return path), or test for None before .{attribute}."
    else:
        cause = (
            f"{expression} is None when {frame.place} runs: it was never set (or set to None), or was"
            " assigned from a call that returned nothing."
        )
        fix = f"Find where {expression} gets its value and make it a real object before this line (print or assert it)."
    return answer(
        title=f"{expression} is None at {frame.place}",
        meaning=f"{frame.place} ({frame.source}) reads .{attribute} of {expression}, which is None.",
        cause=cause,
        fix=fix,
    )


def _unpacked_call(match: re.Match[str], text: str) -> tuple[Frame, str] | None:
    frame = raised_at_user_line(match, text)
    found = re.match(r"\s*(?:for\s+)?[\w\s,()\[\].*]+?(?:=|\bin\b)\s*(.+?)\s*:?\s*$", frame.source) if frame else None
    return (frame, found.group(1)) if frame and found else None


def _none_unpack(match: re.Match[str], text: str) -> Explanation:
    frame, value = _unpacked_call(match, text) or (None, "")
    assert frame is not None
    return answer(
        title=f"{value} is None where {frame.place} unpacks it",
        meaning=f"{frame.place} ({frame.source}) unpacks {value} into several names, and it is None.",
        cause=(
            f"{value} returned None instead of a tuple: a function whose return is missing on the path"
            " taken (a branch that falls off the end, a bare return), or a value set to None."
        ),
        fix=f"Make {callee(value)} return all its values on every path (return a, b), or check for None first.",
    )


ARGUMENT = r"(\w+)\(\): argument '(\w+)' \(position (\d+)\) must be ([\w .]+?), not (\w+(?:\.\w+)?)"
COMBINATION = r"(\w+)\(\) received an invalid combination of arguments - got \((?:\w+=)?([\w.]+),"


def _type_answer(function: str, what: str, expected: str, passed: str) -> Explanation:
    usual, conversion = CONVERSIONS.get(passed, (f"a {passed}", f"pass a {expected}"))
    if expected != "Tensor" and passed == "Tensor":
        usual, conversion = "a tensor", f"pass a Python {expected} (t.item() for one number, t.tolist() for several)"
    return answer(
        title=f"{function}() got a {passed} where it needs a {expected}",
        meaning=f"torch's {function}() checks its argument types: {what} must be a {expected} and was a {passed}.",
        cause=f"The value passed as {what} is {usual}.",
        fix=f"Convert it before the call: {conversion}.",
    )


def _trailing_comma(match: re.Match[str], text: str) -> Frame | None:
    """A frame of the user's whose line assigns with a trailing comma (``x = self.conv2(x),``)."""
    for _, frame in frames(text[: match.start()]):
        source = frame.source
        if (not frame.in_library and re.match(r"\s*[\w.]+\s*=[^=].*,\s*$", source)
                and source.count("(") == source.count(")") and source.count("[") == source.count("]")):
            return frame
    return None


def _argument(match: re.Match[str], text: str) -> Explanation:
    function, name, position, expected, passed = match.groups()
    comma = _trailing_comma(match, text) if passed == "tuple" else None
    if comma:
        return answer(
            title=f"A trailing comma makes a tuple at {comma.place}",
            meaning=f"torch's {function}() needs a Tensor as argument '{name}' and got a tuple.",
            cause=f"{comma.place} ({comma.source}) ends with a comma, so Python assigns a one-element tuple.",
            fix="Remove the trailing comma from that line.",
        )
    return _type_answer(function, f"argument '{name}' (position {position})", expected, passed)


def _combination(match: re.Match[str], text: str) -> Explanation:
    return _type_answer(match.group(1), "its input (the first argument)", "Tensor", match.group(2))


KNOWN = [
    known(
        "none-attribute",
        r"AttributeError: 'NoneType' object has no attribute '(\w+)'",
        _none_attribute,
        generic=True,
        when=lambda match, text: _none_attribute_expression(match, text) is not None,
    ),
    known(
        "none-unpacked",
        r"TypeError: cannot unpack non-iterable NoneType object",
        _none_unpack,
        generic=True,
        when=lambda match, text: _unpacked_call(match, text) is not None,
    ),
    known("argument-type", ARGUMENT, _argument, generic=True),
    known(
        "argument-combination",
        COMBINATION,
        _combination,
        generic=True,
        when=lambda match, text: match.group(2) in CONVERSIONS,
    ),
]
