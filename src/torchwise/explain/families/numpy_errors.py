"""Known errors of turning NumPy arrays into tensors: arrays of Python objects, which torch has
no dtype for.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import user_frame


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


KNOWN: list[KnownError] = [
    known(
        "numpy-object-array",
        r"can't convert np\.ndarray of type numpy\.object_?",
        _object_array,
    ),
]
