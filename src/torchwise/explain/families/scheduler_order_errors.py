"""Known warnings of a learning-rate scheduler stepped before its optimizer.

torch.optim.lr_scheduler.LRScheduler.step warns on its first real step when the optimizer's
step has not run yet ("Detected call of `lr_scheduler.step()` before `optimizer.step()`"), or
when optimizer.step was replaced after the scheduler was built ("Seems like `optimizer.step()`
has been overridden after learning rate scheduler initialization"). Besides the plain wrong
order, the frequent cause is mixed precision: GradScaler.step (and apex amp, and Lightning or
transformers under fp16) skips optimizer.step when the first steps' gradients overflow while
the scaler calibrates its scale, and the scheduler then steps anyway.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

# signs in a paste that the optimizer steps through a loss scaler (AMP, apex, fp16 trainers)
SCALED = re.compile(
    r"scaler\.step|GradScaler|\bamp\b|autocast|fp16|float16|mixed[_ ]precision|precision\s*=\s*['\"]?16"
    r"|Gradient overflow|Skipping step|loss scale",
    re.IGNORECASE,
)


def _scheduler_before_optimizer(match: re.Match[str], text: str) -> Explanation:
    meaning = (
        "A warning, not an error: the scheduler's first step() ran while the optimizer had not"
        " stepped yet, so the first value of the learning-rate schedule is skipped. Training"
        " goes on."
    )
    if SCALED.search(text):
        return answer(
            title="lr_scheduler.step() ran before any optimizer.step(): mixed precision skipped the first step",
            meaning=meaning,
            cause=(
                "The run uses a loss scaler (torch.amp GradScaler, apex amp, or fp16 in Lightning /"
                " transformers). scaler.step(optimizer) skips optimizer.step() when the gradients"
                " overflow, which is normal in the first iterations while the scale is being"
                " calibrated, and the scheduler is stepped anyway. The order in the code is right."
            ),
            fix=(
                "Nothing is broken: the warning is harmless (one scheduler step is lost). To silence"
                " it, step the scheduler only when the optimizer stepped: compare scaler.get_scale()"
                " before and after scaler.update() and call scheduler.step() only if it did not"
                " drop."
            ),
        )
    return answer(
        title="lr_scheduler.step() is called before optimizer.step()",
        meaning=meaning,
        cause=(
            "The code calls scheduler.step() before optimizer.step(): at the start of the epoch or"
            " iteration (the order required before PyTorch 1.1), or the optimizer.step() was"
            " replaced or wrapped after the scheduler was built."
        ),
        fix=(
            "Call scheduler.step() after optimizer.step(): at the end of each iteration for"
            " per-step schedules, or at the end of the epoch for per-epoch ones. If the optimizer"
            " steps through a GradScaler, the warning in the first iterations is harmless."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "scheduler-before-optimizer",
        r"Detected call of `?lr_scheduler\.step\(\)`? before `?optimizer\.step\(\)`?"
        r"|you should call them in the opposite order: `?optimizer\.step\(\)`? before `?lr_scheduler\.step\(\)`?"
        r"|`?optimizer\.step\(\)`? has been overridden after learning rate scheduler initialization",
        _scheduler_before_optimizer,
    ),
]
