"""Learning-rate schedules as pure functions of the optimizer step.

The loop sets ``lr = peak * lr_factor(step)`` before every step. Being a pure function of the
step, the schedule needs no state of its own in a checkpoint, and resume is exact by construction.

>>> from torchwise.config import ScheduleConfig
>>> cfg = ScheduleConfig(name="warmup-cosine", warmup_steps=10)
>>> [round(lr_factor(cfg, step=s, total_steps=110), 3) for s in (0, 5, 10, 60, 110)]
[0.1, 0.6, 1.0, 0.5, 0.0]
"""

from __future__ import annotations

import math

from torchwise.config import ScheduleConfig


def lr_factor(cfg: ScheduleConfig, *, step: int, total_steps: int | None,
              respan: list[float] | None = None) -> float:
    """The LR multiplier for optimizer step ``step`` (0-based) of ``total_steps`` (None: unknown,
    a stream trained by epochs, which only the constant and step schedules allow).

    ``respan`` ([step E, factor f]): the run was extended (or shortened) at step E, where its LR
    factor was f. There is no second warmup: from E the schedule's decay runs again from f down
    to its end value at the new ``total_steps`` (linear stays linear, the others anneal by cosine),
    so the LR never rises at an extension.

    >>> cosine = ScheduleConfig(name="cosine")
    >>> [round(lr_factor(cosine, step=s, total_steps=200, respan=[100, 0.2]), 3) for s in (100, 150, 200)]
    [0.2, 0.1, 0.0]
    """
    total = max(total_steps or 1, 1)
    floor = cfg.min_lr_ratio
    if cfg.name == "constant":
        return 1.0
    if cfg.name == "step":
        return cfg.gamma ** (step // cfg.step_size)
    if respan is not None and step >= respan[0]:
        start, start_factor = int(respan[0]), float(respan[1])
        progress = min((step - start) / max(total - start, 1), 1.0)
        end = 1 / 1e4 if cfg.name == "one-cycle" else floor
        end = min(end, start_factor)
        if cfg.name == "linear":
            return end + (start_factor - end) * (1 - progress)
        return end + (start_factor - end) * _cosine(progress, 0.0)
    if cfg.name == "linear":
        return floor + (1 - floor) * max(0.0, 1 - step / total)
    if cfg.name == "cosine":
        return _cosine(min(step / total, 1.0), floor)
    if cfg.name == "warmup-cosine":
        warmup = cfg.warmup_steps if cfg.warmup_steps is not None else round(cfg.warmup_fraction * total)
        if step < warmup:
            # (step + 1): the very first step already moves; a zero LR step would be wasted.
            return (step + 1) / warmup
        return _cosine(min((step - warmup) / max(total - warmup, 1), 1.0), floor)
    if cfg.name == "one-cycle":
        peak = cfg.pct_start * total
        start, end = 1 / 25, 1 / 1e4  # torch OneCycleLR's default div_factor and final_div_factor
        if step < peak:
            return start + (1 - start) * _cosine_rise(step / peak)
        return end + (1 - end) * _cosine(min((step - peak) / max(total - peak, 1), 1.0), 0.0)
    raise ValueError(f"unknown schedule {cfg.name!r}")


def _cosine(progress: float, floor: float) -> float:
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def _cosine_rise(progress: float) -> float:
    return 0.5 * (1 - math.cos(math.pi * progress))
