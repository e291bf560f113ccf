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
            "A custom autograd Function, or an op of a compiled C++/CUDA extension, returns a"
            " gradient for an integer input (indices, a mask, a count) from its backward, or"
            " returns that integer input itself; torch's own ops never do."
        ),
        fix=(
            "In that Function's backward return None for every input that is not floating point"
            " (and call ctx.mark_non_differentiable on integer outputs in forward); or replace the"
            " extension's op with a torch op that does the same (torch.gather / index_select for"
            " a gather), which autograd differentiates correctly."
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
