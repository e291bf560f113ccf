"""Known errors of a backward function that returns a gradient autograd cannot accept: an
integer-typed gradient from a custom autograd Function or a compiled extension's op.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _integer_gradient(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A backward function returned a gradient that is not floating point",
        meaning=(
            "autograd checks every gradient a backward function returns: gradients exist only"
            " for floating-point (or complex) inputs, and one it got is an integer or bool tensor."
        ),
        cause=(
            "A custom autograd Function (typically a compiled C++/CUDA op: furthest point"
            " sampling, ball query or grouping in PointNet++-style code) returns integer indices"
            " from forward without ctx.mark_non_differentiable, so since torch 1.3 autograd treats"
            " them as differentiable and integer gradients reach the check; or its backward returns"
            " a gradient for an integer input. torch's own ops never do."
        ),
        fix=(
            "In that Function's forward call ctx.mark_non_differentiable(indices) on every integer"
            " output (the fix those repositories' newer pointnet2 ops carry), and in backward return"
            " None for inputs that are not floating point; or replace the op with a torch op that"
            " does the same (torch.gather / index_select), which autograd handles."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "integer-gradient",
        r"Expected isFloatingType\(grads?(?:\[i\])?\.(?:type\(\)\.scalarType\(\)|scalar_type\(\))\)"
        r"[^\n]*to be true, but got false",
        _integer_gradient,
    ),
]
