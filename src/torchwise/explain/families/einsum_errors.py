"""Known errors of torch.einsum: an equation whose subscripts do not fit the operands.

The message names the subscript or the operand and the two numbers that disagree; the source
line of the call (in the user's frame) says how the operand was made, e.g. a ``.squeeze()`` that
also dropped a batch of one.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import user_frame


def _subscript_size(match: re.Match[str], text: str) -> Explanation:
    letter, size, operand, seen = match.group(1), match.group(2), match.group(3), match.group(4)
    return answer(
        title=f"einsum: subscript {letter} is {size} in operand {operand} but {seen} before",
        meaning=(
            f"Every letter of an einsum equation names one size; {letter} is {seen} in an earlier"
            f" operand and {size} in operand {operand} (sizes must match, or be 1 to broadcast)."
        ),
        cause=(
            f"The operands were built for different sizes of the dimension {letter}: a parameter"
            f" or precomputed matrix made for {seen} (a graph of {seen} nodes, a config's"
            f" default) meets data with {size} (another dataset), or the operands' axes are in"
            " another order than the equation says."
        ),
        fix=(
            f"Print each operand's shape before the call; build the parameter or matrix with the"
            f" data's size ({size}: the number of nodes/series/classes of this dataset, from the"
            " config or the data) or fix the equation's order of letters."
        ),
    )


def _subscript_count(match: re.Match[str], text: str) -> Explanation:
    letters, dims, operand = int(match.group(1)), int(match.group(2)), match.group(3)
    frame = user_frame(text, match.start())
    squeezed = frame is not None and ".squeeze()" in frame.source
    if squeezed and dims < letters:
        cause = (
            f"Operand {operand} comes from .squeeze(), which drops every axis of size 1, including"
            " the batch axis when a batch holds one sample (the last batch, or batch_size=1)."
        )
        fix = (
            "Squeeze only the axes meant: x.squeeze(-1).squeeze(-1) or x.flatten(1), never a bare"
            " .squeeze() on a batch; or use DataLoader(drop_last=True)."
        )
    else:
        cause = (
            f"Operand {operand} has {dims} dimensions where the equation gives it {letters}"
            " letters: the tensor lost or gained an axis (a squeeze, a missing batch axis, an"
            " extra unsqueeze) before the call."
        )
        fix = "Print the operand's shape before the call and reshape it, or write '...' for varying leading axes."
    return answer(
        title=f"einsum: operand {operand} has {dims} dimensions, the equation gives it {letters}",
        meaning=f"The equation names {letters} axes for operand {operand}; the tensor has {dims}.",
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "einsum-subscript-size",
        r"einsum\(\): subscript (\w) has size (\d+) for operand (\d+) which does not broadcast with"
        r" previously seen size (\d+)",
        _subscript_size,
    ),
    known(
        "einsum-subscript-count",
        r"einsum\(\): the number of subscripts in the equation \((\d+)\) does not match the number of"
        r" dimensions \((\d+)\) for operand (\d+)",
        _subscript_count,
    ),
]
