"""Known errors of arithmetic on boolean masks, which torch 1.2 stopped allowing.

Before torch 1.2 a comparison (``x == 0``, ``mask > 0.5``) gave a uint8 tensor and code inverted
a mask with ``1 - mask``; since 1.2 it gives a bool tensor, and subtraction with one raises
"Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a
mask, use the `~` or `logical_not()` operator instead." The line that raised holds the ``1 - ...``.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import at_user_line


def _bool_subtraction(match: re.Match[str], text: str) -> Explanation:
    at = at_user_line(text, match.start())
    return answer(
        title=f"A boolean mask was inverted with 1 - mask{at}",
        meaning=(
            "Subtraction is not defined for bool tensors; the code subtracts a mask (usually 1 - mask to"
            " invert it), which torch before 1.2 allowed because comparisons returned uint8 tensors."
        ),
        cause=(
            "The code (the repository's, or a library's it calls) was written for torch < 1.2 and runs on a"
            " newer torch, where comparisons and masks are bool tensors."
        ),
        fix=(
            "Invert with ~mask or mask.logical_not() where it says 1 - mask (or (1 - mask.int()) where a"
            " number is meant); for a library, upgrade it to a release written for the installed torch."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "bool-mask-subtraction",
        r"Subtraction, the `?-`? operator, with a bool tensor is not supported",
        _bool_subtraction,
    ),
]
