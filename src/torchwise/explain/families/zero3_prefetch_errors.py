"""Known errors of DeepSpeed ZeRO stage 3's parameter prefetching.

ZeRO-3 gathers each layer's sharded parameters just before they are used and prefetches the next
ones in the order it recorded; "still have inflight params [...]" is its check at the end of a
forward that some gathers are still open, which happens when the module order changes between
steps (generation, evaluation between training steps, a model whose forward takes other paths) and
is a known bug of several deepspeed releases.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _inflight(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="DeepSpeed ZeRO-3 ended a forward with parameters still being gathered",
        meaning=(
            "ZeRO-3's parameter coordinator found, at the end of a forward pass, parameters it had"
            " started to gather (prefetch) and not released: its record of the module order did not"
            " match the order that ran."
        ),
        cause=(
            "The forward took another path than the one ZeRO-3 traced (generation or evaluation"
            " between training steps, conditional modules), which the prefetch bookkeeping of the"
            " installed deepspeed release does not handle; a known bug of several releases."
        ),
        fix=(
            "Install another deepspeed release (the one the project pins, or a newer one with the fix);"
            ' or turn prefetching off in the ZeRO config ("stage3_prefetch_bucket_size": 0) or use'
            " ZeRO stage 2 if the model fits."
        ),
    )


KNOWN: list[KnownError] = [
    known("zero3-inflight-params", r"still have inflight params", _inflight),
]
