"""Known errors of pandas inside a training pipeline: a row looked up by its label with a
position. ``KeyError: 0`` raised in pandas' index lookup (``get_loc``) says that ``df[...]``,
``df.loc[...]`` or ``series[...]`` was given an integer the index does not hold as a label: the
sampler's position 0..len-1 used as a label, where the index was filtered, shuffled or is not
0..n-1.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import frames, user_frame

PANDAS_LOOKUP = re.compile(r"pandas[\\/]core[\\/](?:indexes|series|frame|indexing)")


def _in_pandas(match: re.Match[str], text: str) -> bool:
    return any(PANDAS_LOOKUP.search(frame.file) for _, frame in frames(text[: match.start()]))


def _position_as_label(match: re.Match[str], text: str) -> Explanation:
    key = match.group(1)
    frame = user_frame(text, match.start())
    at = f" at {frame.place} ({frame.source})" if frame else ""
    worker = "DataLoader worker" in text or "__getitem__" in text
    return answer(
        title=f"pandas has no row labelled {key}: a position was used as a label{at}",
        meaning=(
            f"A pandas Series or DataFrame was indexed with [{key}] (or .loc), which looks up the"
            f" label {key} in its index, not the position; the index holds no such label."
        ),
        cause=(
            ("The Dataset's __getitem__ reads the sampler's position idx (0..len-1) as a label"
             if worker else "The code reads a position as a label")
            + " (df[col][idx], df.loc[idx]), while the index is not 0..n-1: rows were filtered,"
            " split or shuffled (train_test_split keeps the old labels), or read with another index."
        ),
        fix=(
            "Index by position: df.iloc[idx] (series.iloc[idx]), or renumber the rows once after"
            " loading and filtering: df = df.reset_index(drop=True)."
        ),
    )


KNOWN: list[KnownError] = [
    known("pandas-position-key", r"KeyError: (-?\d+)\b", _position_as_label, when=_in_pandas),
]
