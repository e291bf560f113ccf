"""Known errors of calling a mixed-precision GradScaler out of order.

A GradScaler keeps per-iteration state: ``scaler.scale(loss).backward()`` sets the scale,
``scaler.unscale_(optimizer)`` (optional, once) and ``scaler.step(optimizer)`` record whether the
gradients hold inf/NaN, ``scaler.update()`` reads those records and resets them. Each message
names the call that found the state of another order; the paste says who made the calls (the
training loop, or a library such as accelerate that owns the scaler) and whether gradients are
accumulated over several micro-steps.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

ORDER = (
    "Once per optimizer step, in this order: scaler.scale(loss).backward(); (only then, if you"
    " clip) scaler.unscale_(optimizer) and clip_grad_norm_; scaler.step(optimizer);"
    " scaler.update(); optimizer.zero_grad()."
)


def _accelerate(text: str) -> bool:
    return bool(re.search(r"accelerate[\\/]|\baccelerator\b|Accelerator\(", text))


def _accumulating(text: str) -> bool:
    return bool(re.search(r"accumulat", text, re.IGNORECASE))


def _unscale_twice(match: re.Match[str], text: str) -> Explanation:
    if _accumulating(text):
        cause = (
            "Gradients are accumulated over several micro-steps, and the loop calls"
            " scaler.unscale_(optimizer) (to clip) on every micro-step while scaler.step and"
            " scaler.update run only every N steps: the second micro-step unscales again."
        )
    else:
        cause = (
            "scaler.unscale_(optimizer) ran twice before scaler.update(): most often gradients"
            " are accumulated and the loop unscales (to clip) on every micro-step while"
            " scaler.step and scaler.update run only every N steps; or the loop calls it and so"
            " does a helper (a clip-gradients function, a framework hook), or scaler.update() is"
            " skipped on some iterations (inside an if, or after a continue)."
        )
    return answer(
        title="GradScaler.unscale_() was called twice for one optimizer step",
        meaning=(
            "unscale_ divides the gradients by the loss scale and records that it did; a second"
            " call before scaler.update() would divide them again, so the scaler refuses."
        ),
        cause=cause,
        fix=(
            "Unscale (and clip) only on the micro-step that steps: if (i + 1) % accum_steps == 0:"
            " scaler.unscale_(optimizer); clip_grad_norm_(...); scaler.step(optimizer);"
            f" scaler.update(); optimizer.zero_grad(). {ORDER}"
        ),
    )


def _scale_none(match: re.Match[str], text: str) -> Explanation:
    call = match.group(1)
    if _accelerate(text):
        cause = (
            "accelerate runs mixed precision (fp16 in its config) with its own GradScaler: its"
            " optimizer.step() calls scaler.step, but the loop called loss.backward() itself, so"
            " accelerate's scaler never scaled a loss."
        )
        fix = (
            "Call accelerator.backward(loss) instead of loss.backward() (and let accelerate own"
            " the scaler: no GradScaler of your own); or turn fp16 off in the accelerate config."
        )
    else:
        cause = (
            f"scaler.{call}() ran in an iteration where no loss went through scaler.scale(): the"
            " loop calls loss.backward() directly (or scales with another GradScaler object)."
        )
        fix = f"Scale the loss with this scaler: scaler.scale(loss).backward(). {ORDER}"
    return answer(
        title=f"GradScaler.{call}() ran before any loss was scaled",
        meaning=(
            "The scaler's scale is created by its first scaler.scale(loss); "
            f"{call}() found none, so no loss of this run went through this scaler."
        ),
        cause=cause,
        fix=fix,
    )


def _no_inf_checks(match: re.Match[str], text: str) -> Explanation:
    if _accelerate(text):
        cause = (
            "The loop drives accelerate's scaler (accelerator.scaler) itself while accelerate"
            " already steps and updates it behind the scenes: scaler.update() then finds no"
            " scaler.step() of its own."
        )
        fix = (
            "Do not call the scaler with accelerate: accelerator.backward(loss); optimizer.step();"
            " optimizer.zero_grad() (accelerate scales, steps and updates it)."
        )
    else:
        cause = (
            "scaler.update() ran without a scaler.step(optimizer) since the last update (the"
            " step is inside an if, or the optimizer is stepped directly), or the optimizer"
            " given to scaler.step holds parameters that got no gradients (another optimizer"
            " object or model, or all its parameters frozen)."
        )
        fix = (
            "Call scaler.step(optimizer) before every scaler.update(), with the optimizer over"
            f" the parameters the loss reaches. {ORDER}"
        )
    return answer(
        title="GradScaler.update() found no scaler.step() to take the inf/NaN check from",
        meaning=(
            "scaler.step(optimizer) records, per optimizer, whether the gradients held inf or"
            " NaN; update() reads those records to adjust the scale and found none."
        ),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "scaler-unscale-twice",
        r"unscale_\(\) has already been called on this optimizer since the last update\(\)",
        _unscale_twice,
    ),
    known("scaler-not-scaled", r"Attempted (step|update|unscale_) but _scale is None", _scale_none),
    known(
        "scaler-no-inf-checks",
        r"No inf checks were recorded (?:prior to update|for this optimizer)",
        _no_inf_checks,
    ),
]
