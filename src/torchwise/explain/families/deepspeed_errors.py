"""Known errors of DeepSpeed ZeRO's sharded training (FSDP's are in ``fsdp_errors``).

ZeRO stage 3 partitions gradients across ranks, so it cannot skip the gradient reduction of a
micro-step the way DDP's ``no_sync()`` does; trainers that accumulate gradients call it anyway.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _zero3_no_sync(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="DeepSpeed ZeRO stage 3 cannot run no_sync() (gradient accumulation)",
        meaning=(
            "no_sync() skips the gradient reduction of a micro-step so gradients accumulate"
            " locally; under ZeRO stage 3 each rank holds only its shard of the gradients, so"
            " there is nothing local to accumulate in and DeepSpeed refuses."
        ),
        cause=(
            "The training loop or the trainer (transformers Trainer, accelerate) wraps the"
            " micro-steps of gradient accumulation in model.no_sync(), as it does for DDP, while"
            " the engine runs ZeRO stage 3."
        ),
        fix=(
            "Let DeepSpeed accumulate: set gradient_accumulation_steps in the DeepSpeed config"
            " (and 1 in the trainer, or the same value through accelerate's DeepSpeed plugin so"
            " it does not call no_sync), or use ZeRO stage 1/2, or set gradient accumulation to 1;"
            " a newer transformers/accelerate skips no_sync under DeepSpeed."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "zero3-no-sync",
        r"no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage 3",
        _zero3_no_sync,
    ),
]
