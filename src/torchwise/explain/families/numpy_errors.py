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
            " or from mixed values (numbers with None or strings, e.g. a pandas column with"
            " missing values)."
        ),
        fix=(
            "Join the pieces into one numeric array first: np.concatenate(list_of_arrays) (or"
            " torch.cat(list_of_tensors)) for batches, padding for sequences, and"
            " .astype(np.float32) once every entry is a number; print the array's first entries"
            " and their types to see which case it is."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "numpy-object-array",
        r"can't convert np\.ndarray of type numpy\.object_?",
        _object_array,
    ),
]
