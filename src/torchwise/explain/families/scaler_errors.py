"""Known errors of driving a GradScaler by hand in the wrong order: a step without a scaled
backward, an update without a step, a step on an optimizer whose parameters got no gradients,
gradients unscaled twice before an update (gradient accumulation). Where the paste runs through
Hugging Face accelerate, the scaler is accelerate's to drive.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

ORDER = (
    "scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update(), in that order, once"
    " per iteration"
)


def _through_accelerate(text: str) -> bool:
    """Hugging Face accelerate drives the run: its files in the traceback, or its API in the
    paste (Lightning's Trainer(accelerator=...) is not it)."""
    return bool(re.search(
        r"[\\/]accelerate[\\/]|\baccelerator\.(?:backward|scaler|prepare)\b|\bAccelerator\(|accelerate launch",
        text,
    ))


def _scale_none(match: re.Match[str], text: str) -> Explanation:
    call = match.group(1)
    if _through_accelerate(text):
        cause = (
            "Mixed precision (fp16) is on in accelerate, so the prepared optimizer's step goes"
            " through a GradScaler, but the training loop called loss.backward() itself: the loss"
            " was never scaled, so the scaler has no scale yet."
        )
        fix = (
            "Call accelerator.backward(loss) instead of loss.backward(), then optimizer.step();"
            " accelerate scales and unscales for you (or turn mixed_precision off in its config)."
        )
    else:
        cause = (
            f"scaler.{call}() ran in an iteration where the loss was not passed through"
            " scaler.scale(): the loop calls loss.backward() directly, or the scaler used for the"
            " step is another object than the one that scaled the loss."
        )
        fix = f"Use one GradScaler and call {ORDER}."
    return answer(
        title=f"GradScaler.{call}() before any scaler.scale(loss)",
        meaning=(
            "A GradScaler creates its scale the first time it scales a loss; its"
            f" {call}() found no scale, so no loss was scaled through it."
        ),
        cause=cause,
        fix=fix,
    )


def _unscale_twice(match: re.Match[str], text: str) -> Explanation:
    said = re.search(r"accumulat", text, re.IGNORECASE)
    accumulating = "Gradients are accumulated" if said else "Most often gradients are accumulated"
    return answer(
        title="GradScaler.unscale_() was called twice for one optimizer step",
        meaning=(
            "unscale_ divides the gradients by the loss scale and records that it did; a second"
            " call before scaler.update() would divide them again, so the scaler refuses."
        ),
        cause=(
            f"{accumulating} over several micro-steps and the loop unscales (to clip) on every"
            " micro-step while scaler.step and scaler.update run only every N steps; or the loop"
            " calls unscale_ and so does a helper (a clip-gradients function, a framework hook), or"
            " scaler.update() is skipped on some iterations (inside an if, or after a continue)."
        ),
        fix=(
            "Unscale (and clip) only on the micro-step that steps: if (i + 1) % accum_steps == 0:"
            " scaler.unscale_(optimizer); clip_grad_norm_(...); scaler.step(optimizer);"
            f" scaler.update(); optimizer.zero_grad(). In general: {ORDER}, with unscale_ at most"
            " once, between backward and step."
        ),
    )


def _no_inf_checks(match: re.Match[str], text: str) -> Explanation:
    if match.group(1):  # "... for this optimizer": step() found no gradients to unscale
        return answer(
            title="GradScaler.step() found no gradients in the optimizer",
            meaning=(
                "scaler.step(optimizer) unscales the optimizer's gradients and checks them for"
                " inf/NaN first; none of its parameters had a gradient, so nothing was checked."
            ),
            cause=(
                "The optimizer's parameters got no gradient this iteration: the loss does not"
                " reach them (a loss rebuilt from numbers with torch.tensor(..., requires_grad=True),"
                " .item() or .detach() cuts the graph before the model), they are frozen"
                " (requires_grad=False) or unused, the optimizer was built over other parameter"
                " objects (before the model was moved, replaced or wrapped), or the gradients were"
                " zeroed/set to None between backward and step."
            ),
            fix=(
                "Compute the loss from the model's output with torch operations only; build the"
                " optimizer after moving and wrapping the model, over the parameters that train;"
                " check that some p.grad is not None after backward."
            ),
        )
    if _through_accelerate(text):
        cause = (
            "The loop drives accelerate's scaler itself (scaler = accelerator.scaler;"
            " scaler.update()) while accelerate already does the scaling inside"
            " accelerator.backward and the prepared optimizer's step, so the update ran without"
            " a scaler.step of its own."
        )
        fix = (
            "Do not call the scaler yourself under accelerate: accelerator.backward(loss);"
            " optimizer.step(); optimizer.zero_grad() (mixed precision comes from its config)."
        )
    else:
        cause = (
            "scaler.update() ran in an iteration without scaler.step(optimizer): the step was"
            " skipped or commented out, called on the optimizer directly, or update() is called"
            " more often than step (per micro-batch under gradient accumulation)."
        )
        fix = f"Call {ORDER}; under gradient accumulation step and update only on the last micro-batch."
    return answer(
        title="GradScaler.update() without a scaler.step() in this iteration",
        meaning=(
            "update() adjusts the scale from the inf/NaN checks that scaler.step(optimizer)"
            " records; none were recorded since the last update."
        ),
        cause=cause,
        fix=fix,
    )


def _step_twice(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="GradScaler.step() ran twice for one optimizer without an update() between",
        meaning=(
            "step(optimizer) unscales that optimizer's gradients and records it; the next step on"
            " the same optimizer must come after scaler.update()."
        ),
        cause=(
            "scaler.update() is missing after scaler.step(optimizer) (or runs less often than"
            " step), or the same optimizer is stepped twice in one iteration (two losses each"
            " calling scaler.step, or one optimizer object used for two models)."
        ),
        fix=f"Call {ORDER}; with several losses, backward each and step each optimizer once.",
    )


def _autocast_device(match: re.Match[str], text: str) -> Explanation:
    device = match.group(1)
    return answer(
        title=f"This torch has no autocast for device_type '{device}'",
        meaning=f"torch.autocast(device_type='{device}') is not supported by the installed torch.",
        cause=(
            f"The code (or a library) wraps the forward in torch.autocast with the model's device"
            f" type, and autocast for '{device}' came in a later torch ('mps' in 2.5 and later)."
        ),
        fix=(
            f"Skip autocast on that device (enabled=False when device.type == '{device}'), or"
            " upgrade torch to a release with it, or run on CPU/CUDA."
        ),
    )

KNOWN: list[KnownError] = [
    known(
        "scaler-unscale-twice",
        r"unscale_\(\) has already been called on this optimizer since the last update\(\)",
        _unscale_twice,
    ),
    known("scaler-not-scaled", r"Attempted (\w+) but _scale is None", _scale_none),
    known(
        "scaler-no-inf-checks",
        r"No inf checks were recorded (for this optimizer)?(?:prior to update)?",
        _no_inf_checks,
    ),
    known(
        "scaler-step-twice",
        r"step\(\) has already been called since the last update\(\)",
        _step_twice,
    ),
    known("autocast-device-unsupported", r"unsupported autocast device_type '(\w+)'", _autocast_device),
]
