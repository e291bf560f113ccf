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


def _world_size_changed(match: re.Match[str], text: str) -> Explanation:
    saved, now = match.group(1), match.group(2)
    return answer(
        title=f"A ZeRO checkpoint of {saved} data-parallel ranks loaded on {now}",
        meaning=(
            f"ZeRO saves each rank's partition of the optimizer state; the checkpoint holds {saved}"
            f" partitions, and DeepSpeed cannot re-split them for {now} ranks while loading."
        ),
        cause=f"The run resumes with another number of GPUs (or nodes) than the one that saved it ({saved} -> {now}).",
        fix=(
            f"Resume on {saved} data-parallel ranks; or load only the model weights"
            " (load_checkpoint(..., load_optimizer_states=False, load_lr_scheduler_states=False), or"
            " load_module_only=True), or convert the checkpoint first: a universal checkpoint"
            " (ds_to_universal.py, then universal_checkpoint in the config) or zero_to_fp32.py for"
            " the weights."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "zero-checkpoint-world-size",
        r"checkpoint being loaded used a DP world size of (\d+) but the current world size is (\d+)",
        _world_size_changed,
    ),
    known(
        "zero3-no-sync",
        r"no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage 3",
        _zero3_no_sync,
    ),
]
