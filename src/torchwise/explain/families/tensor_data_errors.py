"""Known errors of torch.tensor given data that is not numbers.

``torch.tensor(data)`` (and ``torch.Tensor``, ``torch.as_tensor``, default_collate on Python values)
infers a shape and a dtype from nested Python lists of numbers. The message names what it met
instead: strings ("too many dimensions 'str'", "new(): invalid data type 'str'"), an object with
no sequence shape ("could not determine the shape of object type 'DataFrame'"), or a value of no
dtype ("Could not infer dtype of NoneType"). The type named says where the data went wrong.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
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


KNOWN: list[KnownError] = [
    known(
        "tensor-from-non-numbers",
        r"too many dimensions '(str)'|new\(\): invalid data type '(\w+)'"
        r"|could not determine the shape of object type '(\w+)'|Could not infer dtype of (\w+)(?![\w.])",
        _not_numbers,
    ),
]
