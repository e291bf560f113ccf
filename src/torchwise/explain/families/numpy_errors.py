"""Known errors of turning NumPy arrays into tensors: arrays of Python objects, which torch has
no dtype for.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import at_user_line, user_frame


def _object_array(match: re.Match[str], text: str) -> Explanation:
    frame = user_frame(text, match.start())
    at = f" ({frame.place}: {frame.source})" if frame else ""
    return answer(
        title="A NumPy array of Python objects cannot become a tensor",
        meaning=(
            "torch.tensor / torch.Tensor / torch.from_numpy convert arrays of numbers and bools;"
            f" this array has dtype object{at}, which NumPy makes when its entries are not one"
            " rectangular block of numbers."
        ),
        cause=(
            "The array was built from a list of arrays or tensors of different lengths (per-batch"
            " predictions or labels where the last batch is smaller, variable-length sequences),"
            " a pandas column whose cells are arrays, or mixed values (numbers with None or"
            " strings, a column with missing values); or the project's data was made with another"
            " NumPy/pandas version, under which the same code built a numeric array."
        ),
        fix=(
            "Join the pieces into one numeric array first: np.concatenate(list_of_arrays) (or"
            " torch.cat(list_of_tensors)) for batches, padding for sequences, and"
            " np.stack(column.to_list()) for a column of arrays, .astype(np.float32) once every"
            " entry is a number (or the NumPy version the project pins); print the array's first"
            " entries and their types to see which case it is."
        ),
    )


def _from_numpy_tensor(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="torch.from_numpy was given a tensor, not a NumPy array",
        meaning="torch.from_numpy takes a NumPy array only; the value is already a torch.Tensor.",
        cause=(
            "The data is a tensor at this point (the loader or a transform already converted it, or"
            " this version of the code returns tensors), and the line was written for NumPy input."
        ),
        fix=(
            "Use the tensor directly (x.to(device), x.float()), or torch.as_tensor(x), which takes"
            " both; call .numpy() first only if NumPy is really needed."
        ),
    )


def _numpy_over_tensors(match: re.Match[str], text: str) -> Explanation:
    at = at_user_line(text, match.start())
    return answer(
        title="A NumPy reduction was given torch tensors",
        meaning=(
            "NumPy reduced a list that holds torch tensors; it read the tensors' dtype (a"
            " torch.dtype), which has no NumPy .type, so the reduction failed."
        ),
        cause=f"The values collected for NumPy (logged losses or metrics) are tensors, not numbers{at}.",
        fix=(
            "Store numbers: append loss.item() (or float(x)); or convert before NumPy:"
            " np.mean([x.item() for x in values]) / torch.stack(values).mean().item()."
        ),
    )

KNOWN: list[KnownError] = [
    known(
        "numpy-object-array",
        r"can't convert np\.ndarray of type numpy\.object_?",
        _object_array,
    ),
    known("from-numpy-tensor", r"expected np\.ndarray \(got Tensor\)", _from_numpy_tensor),
    known("numpy-over-tensors", r"'torch\.dtype' object has no attribute 'type'", _numpy_over_tensors),
]
