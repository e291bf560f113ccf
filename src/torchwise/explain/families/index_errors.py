"""Known errors of indexing in the user's own code: an index past the end of a dimension (a
batch smaller than the index, an off-by-one, a column the line reads by a constant past the
data's columns), more indices than a value has dimensions (a tensor
indexed by name as if it were a dict), a list shorter than the index (an empty list of files).

As in ``user_code_errors``, the user's frame decides: the index written on the line, the name
it indexes, whether it reads the first element.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known, told_apart
from torchwise.explain.families.user_code_errors import frame_of, raised_here
from torchwise.explain.paste import Frame


def _out_of_bounds(match: re.Match[str], text: str) -> Explanation:
    index, axis, dimension, size = int(match.group(1)), match.group(2), int(match.group(3)), int(match.group(4))
    frame = frame_of(match, text)
    place = frame.place if frame else "the line that raised"
    literal = frame is not None and re.search(rf"\[\s*{index}\s*[,\]:]", frame.source)
    if dimension == 0 and literal and size <= 8:
        cause = (
            f"Dimension 0 is the batch: the code takes sample {index} of every batch, but this"
            f" batch holds only {size}. The last batch of an epoch is smaller when the dataset's"
            " size is not a multiple of the batch size."
        )
        fix = (
            "Index within the batch's real size (x[0], or loop over range(x.size(0))), or drop"
            " the short last batch with DataLoader(..., drop_last=True)."
        )
    elif axis == "axis" and dimension > 0 and frame is not None and _constant_at(frame.source, dimension, index):
        # a NumPy column read by a constant is no loop bound: the data has fewer columns than the
        # code reads (a list or CSV file in another layout than the one the code was written for)
        columns = "one column" if size == 1 else f"{size} columns"
        cause = (
            f"The line reads column {index} by a constant, and the data has {columns} along"
            f" {axis} {dimension} where the code expects at least {index + 1}: what the array was"
            " read from (a list, CSV or annotation file, a split of each line) is in another layout"
            " than the code was written for, such as a file list with one field per line where"
            " the code reads two."
        )
        fix = (
            f"Print x.shape and a few rows before {place}; write the file in the layout the"
            " project documents (its example lists), or read your layout with a Dataset of your own."
        )
    elif dimension == 0 and (sampled := _sampled(frame)):  # round 9: the sampler's index, not a loop's
        return _len_longer(sampled, f" ({place})")
    elif index == size:
        cause = (
            f"An off-by-one: valid indices run from 0 to {size - 1}, and {index} is one past the"
            " end: a loop or counter that goes up to the length inclusive, or an array sized"
            " one entry short of what reads it (a per-step schedule read once more than it has"
            " steps)."
        )
        fix = (
            f"Stop at {size - 1} (range(len(x)), not range(len(x) + 1)), or build the array with"
            " as many entries as the loop reads; print the index and len(x) before that line."
        )
    else:
        cause = (
            f"The index was computed for a larger {('array' if axis == 'axis' else 'tensor')}"
            f" than this one: a count, label or position of {index} or more where this one has"
            f" {size} (a class id beyond the number of classes, a position past the sequence, a"
            " batch smaller than assumed)."
        )
        fix = f"Print x.shape and the index before {place}, and find where the larger value comes from."
    return answer(
        title=f"Index {index} is past the end of {axis} {dimension} (size {size}) at {place}",
        meaning=f"{place} asks for element {index} along {axis} {dimension}, which has {size} (0 to {size - 1}).",
        cause=cause,
        fix=fix,
    )


def _constant_at(source: str, dimension: int, index: int) -> bool:
    """A subscript on the line whose position ``dimension`` is the number ``index`` itself
    (``self.files[idx, 1]`` for axis 1, index 1)."""
    for inside in re.findall(r"\w\[([^\[\]]*)\]", source):
        parts = [part.strip() for part in inside.split(",")]
        if len(parts) > dimension and parts[dimension] == str(index):
            return True
    return False


def _too_many_indices(match: re.Match[str], text: str) -> Explanation:
    dims = next(int(group) for group in (match.group(1), match.group(3), match.group(4)) if group)
    frame = frame_of(match, text)
    place = frame.place if frame else "the line that raised"
    named = frame is not None and re.search(r"([\w.]+)\[\s*['\"](\w+)['\"]\s*\]", frame.source)
    if named:
        holder, key = named.group(1), named.group(2)
        cause = (
            f"{holder} is a {dims}-dimensional tensor or array, not the dict the line reads"
            f" '{key}' from: what produces it (the dataset's __getitem__, a transform such as a"
            " ToTensor class, or a collate_fn) returns a tensor (or a bare value) instead of the"
            " dict of named entries."
        )
        fix = (
            f"Print type({holder}) before that line and follow it back to the transform or"
            " __getitem__ that returns it: make it return the dict (return sample), or index the"
            " tensor by position."
        )
    else:
        cause = (
            f"The value has {dims} dimension(s), fewer than the code assumes: a batch of one that"
            " was squeezed, a reduction (max, sum, argmax) that dropped a dimension (keepdim is"
            " False by default), or labels of shape [N] indexed as [N, C]."
        )
        fix = (
            f"Print x.shape before {place}; index with as many indices as it has dimensions, or"
            " keep the dimension (keepdim=True, x.unsqueeze(dim))."
        )
    return answer(
        title=f"A {dims}-dimensional value indexed with more indices than it has ({place})",
        meaning=f"{place} indexes something with more positions than its {dims} dimension(s).",
        cause=cause,
        fix=fix,
    )


def _list_index(match: re.Match[str], text: str) -> Explanation | None:
    frame = frame_of(match, text)
    line_start = text.rfind("\n", 0, match.start()) + 1
    source = frame.source if frame else text[line_start : match.start()]
    at = f" ({frame.place})" if frame else ""
    first = re.search(r"([\w.]+)\[\s*(?:0|-1)\s*\]", source)
    if first:
        holder = first.group(1)
        return answer(
            title=f"{holder} is empty{at}",
            meaning=f"The line reads {first.group(0)}, and the list {holder} has no elements.",
            cause=(
                f"Nothing was put in {holder}: the files, datasets or results it collects were not"
                " found (a wrong path or glob pattern, a folder layout other than the code expects,"
                " a filter that removed everything), or the step that fills it did not run."
            ),
            fix=(
                f"Print len({holder}) and what it is built from (the path, the pattern) before"
                " that line; point it at the data (an absolute path) or fix the pattern."
            ),
        )
    sampled = _sampled(frame)
    if sampled:
        return _len_longer(sampled, at)
    # any other list: which of the list and the index is off is not in the paste
    return None


def _sampled(frame: Frame | None) -> re.Match[str] | None:
    """In a Dataset's __getitem__ the index is the one the sampler drew from range(len(dataset)): a
    holder read with it at dimension 0 (``self.labels[idx]``) is shorter than what __len__ returns."""
    if frame is None or frame.function != "__getitem__":
        return None
    return re.search(r"(self\.[\w.]+)\[\s*(idx|index|i|item|ind|n|key|k)\s*[\],]", frame.source)


def _len_longer(sampled: re.Match[str], at: str) -> Explanation:
    holder = sampled.group(1)
    read = sampled.group(0) if sampled.group(0).endswith("]") else f"{holder}[{sampled.group(2)}, ...]"
    return answer(
        title=f"The Dataset's __len__ is longer than {holder}{at}",
        meaning=(
            f"__getitem__ reads {read} with the index the DataLoader's sampler drew"
            f" from range(len(dataset)), and {holder} has no element at that index."
        ),
        cause=(
            f"__len__ returns more items than {holder} holds: a count hard-coded or taken from"
            f" another list (the images where {holder} is the labels, a config's size), or"
            f" {holder} was filtered or filled from fewer files than expected."
        ),
        fix=(
            f"Make __len__ return len({holder}) (and check that the lists read together have"
            " one length); print len(dataset) and len of each list it indexes."
        ),
    )


def _read_list_index(match: re.Match[str], text: str) -> Explanation | None:
    line_start = text.rfind("\n", 0, match.start()) + 1
    inline = re.search(r"\w\[\s*-?\w+\s*\]", text[line_start : match.start()])
    return _list_index(match, text) if raised_here(match, text) or inline is not None else None


def _frame_or_one_past(match: re.Match[str], text: str) -> bool:
    # without the user's frame only "one past the end" says something the message does not
    return raised_here(match, text) or match.group(1) == match.group(4)


KNOWN: list[KnownError] = [
    known(
        "index-past-end",
        r"IndexError: index (-?\d+) is out of bounds for (dimension|axis) (\d+) with size (\d+)",
        _out_of_bounds,
        generic=True,
        when=_frame_or_one_past,
    ),
    known(
        "too-many-indices",
        r"IndexError: too many indices for (?:tensor|array) of dimension (\d+)"
        r"|IndexError: trying to index (\d+) dimensions of a (\d+) dimensional tensor"
        r"|IndexError: too many indices for array: array is (\d+)-dimensional",
        _too_many_indices,
        generic=True,
        when=raised_here,
    ),
    told_apart(
        "list-index",
        r"IndexError: list index out of range",
        _read_list_index,
        generic=True,
    ),
]
