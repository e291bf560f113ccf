"""Known errors of in-place writes into memory that several elements share.

torch refuses an in-place write whose destination or source overlaps itself and names which:
"more than one element of the written-to tensor refers to a single memory location" (the tensor
written to is an ``expand()``ed or broadcast view whose elements share storage, stride 0), and
"some elements of the input tensor and the written-to tensor refer to a single memory location"
(the value written is a view of the tensor it is written into: ``x[i] = x[i].T``, ``idx[idx] = ...``).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import at_user_line


def _overlap(match: re.Match[str], text: str) -> Explanation:
    destination = match.group(1) is not None
    at = at_user_line(text, match.start())
    if destination:
        title = f"An in-place write into an expanded (shared-memory) tensor{at}"
        cause = (
            "The tensor written to is a view whose elements share memory: made with expand() (or a"
            " broadcast, or torch.from_numpy of an array with a zero stride) and then modified in place"
            " (add_, mul_, copy_, an indexed assignment, an optimizer step on such a buffer), which older"
            " torch allowed silently."
        )
        fix = (
            "Give it its own memory before writing: .clone() (or .contiguous()) where it is made, e.g."
            " torch.eye(n).expand(g, n, n).clone(); or use the out-of-place form (x = x + y)."
        )
    else:
        title = f"An in-place write reads from the tensor it writes into{at}"
        cause = (
            "The value written is a view of the destination itself (x[i] = x[i].t(), idx[idx] = ...), so"
            " the source would change while it is read."
        )
        fix = "Clone the source first: x[i] = x[i].t().clone() (idx[idx.clone()] = ...)."
    return answer(
        title=title,
        meaning=(
            "torch refused an in-place operation whose memory overlaps itself, because its result would be undefined."
        ),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "inplace-memory-overlap",
        r"unsupported operation: (?:(more than one element of the written-to tensor)|some elements of the input"
        r" tensor and the written-to tensor) refers? to a single memory location",
        _overlap,
    ),
]
