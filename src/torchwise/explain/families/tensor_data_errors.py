"""Known errors of torch.tensor given data that is not numbers.

``torch.tensor(data)`` (and ``torch.Tensor``, ``torch.as_tensor``, default_collate on Python values)
infers a shape and a dtype from nested Python lists of numbers. The message names what it met
instead: strings ("too many dimensions 'str'", "new(): invalid data type 'str'"), an object with
no sequence shape ("could not determine the shape of object type 'DataFrame'"), or a value of no
dtype ("Could not infer dtype of NoneType"). The type named says where the data went wrong. Two
neighbours: "only one element tensors can be converted to Python scalars" (a list of tensors given to
torch.tensor, or .item() of a tensor of several values, told by the line) and torch.cat of an empty list.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known, told_apart
from torchwise.explain.paste import at_user_line


def _not_numbers(match: re.Match[str], text: str) -> Explanation:
    kind = next(group for group in match.groups() if group)
    at = at_user_line(text, match.start())
    if kind == "str":
        cause = (
            "The values are strings: labels kept as class names ('cat', 'positive') or numbers read"
            " from a CSV/JSON as text, or text that was never tokenized."
        )
        fix = (
            "Map the labels to integers first (classes = sorted(set(labels)); index = {c: i for i, c in"
            " enumerate(classes)}; torch.tensor([index[l] for l in labels])), convert numeric text"
            " with float()/int() (pandas: df[col].astype(float)), or tokenize text before it becomes a tensor."
        )
    elif kind in ("DataFrame", "Series"):
        cause = f"A pandas {kind} was given as is; torch does not read pandas objects."
        fix = f"Pass its values: torch.tensor({kind.lower()}.to_numpy(dtype='float32')) (numeric columns only)."
    elif kind == "NoneType":
        cause = (
            "Some value is None: a missing label or feature in the data, or a function (a transform,"
            " a __getitem__ branch) that returns nothing on some path."
        )
        fix = (
            "Find the None (print the sample or batch at that line) and fill or drop it, or return a value on"
            " every path."
        )
    else:
        cause = f"The data holds {kind} objects where numbers are expected."
        fix = f"Convert each {kind} to numbers (or a tensor) before building the tensor."
    return answer(
        title=f"torch.tensor was given {kind} values, not numbers{at}",
        meaning=(
            "torch.tensor builds a tensor from numbers (nested lists or arrays of them) and infers"
            f" its dtype; it met a {kind} and has no dtype or shape for it."
        ),
        cause=cause,
        fix=fix,
    )


def _line_before(text: str, position: int) -> str:
    """The source line written just above the error line (a frame's code, or a quoted line)."""
    lines = text[: max(text.rfind("\n", 0, position), 0)].rstrip().splitlines()
    return lines[-1].strip() if lines else ""


def _many_values(match: re.Match[str], text: str) -> Explanation | None:
    line = _line_before(text, match.start())
    if re.search(r"torch\.(?:tensor|Tensor|as_tensor|LongTensor|FloatTensor)\(", line):
        return answer(
            title=f"torch.tensor was given a list of tensors ({line})",
            meaning=(
                "torch.tensor converts each element of a list to a number; an element that is a tensor"
                " with several values cannot become one number."
            ),
            cause="The list holds tensors (per-sample labels or outputs collected in a loop), not numbers.",
            fix="Join them with torch.stack(list) (same shapes) or torch.cat(list) (along the first dimension).",
        )
    if ".item()" in line or re.search(r"\b(?:float|int)\(", line):
        parallel = re.search(r"DataParallel|data_parallel|replica|gather", text)
        return answer(
            title=f"A tensor with several values was converted to one number ({line})",
            meaning=".item() (and float()/int()) take a tensor of exactly one value; this one holds more.",
            cause=(
                "The model runs under nn.DataParallel, which gathers one loss per GPU, so the loss is a vector."
                if parallel
                else "The value is not reduced: a per-sample loss (reduction='none'), a batch of values, or a"
                " whole row where one element was meant."
            ),
            fix=(
                "Reduce it first: loss = loss.mean() (under DataParallel) before .item() or backward()."
                if parallel
                else "Reduce it (value.mean().item(), .sum()) or take the element meant (value[0].item()),"
                " or keep it as a tensor (value.tolist() for all of them)."
            ),
        )
    return None


def _empty_cat(match: re.Match[str], text: str) -> Explanation:
    line = _line_before(text, match.start())
    at = f" ({line})" if "cat(" in line else ""
    return answer(
        title=f"torch.cat was given an empty list{at}",
        meaning="torch.cat joins the tensors of a list; the list it got holds none.",
        cause=(
            "Nothing was collected before the call: the loop that appends to the list never ran or"
            " always skipped (an empty dataset or folder, a filter or condition that matched nothing, a"
            " path or class name that found no files), or another process or rank got no data."
        ),
        fix=(
            "Find why the list is empty (print its length and the data the loop reads: the path, the"
            " dataset's length, the condition); guard the call (if parts: torch.cat(parts)) where an empty"
            " result is legitimate."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "tensor-from-non-numbers",
        r"too many dimensions '(str)'|new\(\): invalid data type '(\w+)'"
        r"|could not determine the shape of object type '(\w+)'|Could not infer dtype of (\w+)(?![\w.])",
        _not_numbers,
    ),
    # the line that converted tells a list of tensors from a tensor of several values
    told_apart(
        "several-values-to-scalar", r"only one element tensors can be converted to Python scalars", _many_values
    ),
    known("cat-empty-list", r"torch\.cat\(\): expected a non-empty list of Tensors", _empty_cat),
]
