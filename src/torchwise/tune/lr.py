"""`tune lr`: the exponential learning-rate range test, and which LR to train with.

Real optimizer steps at learning rates growing geometrically from ``start_lr`` (1e-7) to
``end_lr`` (10) over at most ``num_steps`` (100) steps, each on the next batch of the training
set. The loss is smoothed with a bias-corrected exponential moving average (``beta`` 0.98),
and the test stops early once the smoothed loss passes 4x its best (it has diverged). The
model, optimizer, scheduler and RNGs are restored afterwards, bit for bit.

Two rules read the smoothed curve, up to its minimum (past it the loss is blowing up):

* **steepest**: the LR where the smoothed loss falls fastest per decade of LR (the most
  negative slope of loss against log10(LR)).
* **valley** (the suggestion): the longest stretch over which the smoothed loss falls without
  a rise; the suggestion is the LR two thirds of the way along it. It stays clear of both the
  flat start and the edge of divergence, and on noisy curves it moves less than the steepest
  point, which a single noisy step can place anywhere.

>>> losses = [2.0] * 10 + [2.0 - 0.1 * i for i in range(15)] + [0.6, 0.9, 1.5, 3.0]
>>> lrs = [10 ** (-5 + 0.2 * i) for i in range(len(losses))]
>>> index = valley_index(losses)
>>> index, f"{lrs[index]:.1e}"
(19, '6.3e-02')
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from torchwise.errors import RunFailed
from torchwise.tune.workload import Workload


@dataclass
class LRFinderResult:
    """The trace (LR, raw and smoothed loss per step), both rules' picks and the suggestion."""

    lrs: list[float]
    losses: list[float]
    smoothed: list[float]
    suggested_lr: float
    rule: str
    steepest_lr: float
    valley_lr: float
    stopped: str
    plot: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def lr_schedule(start_lr: float, end_lr: float, num_steps: int) -> list[float]:
    """``num_steps`` LRs from start_lr to end_lr, equally spaced in log(LR)."""
    ratio = (end_lr / start_lr) ** (1 / max(num_steps - 1, 1))
    return [start_lr * ratio**i for i in range(num_steps)]


def smooth(losses: list[float], beta: float = 0.98) -> list[float]:
    """Exponential moving average with bias correction, so the first points are not pulled to 0."""
    average, out = 0.0, []
    for i, loss in enumerate(losses):
        average = beta * average + (1 - beta) * loss
        out.append(average / (1 - beta ** (i + 1)))
    return out


def steepest_index(smoothed: list[float], lrs: list[float]) -> int:
    """Index of the most negative slope d(loss)/d(log10 LR), up to the curve's minimum.

    Central differences inside, one-sided at the ends (as numpy.gradient)."""
    end = min(range(len(smoothed)), key=smoothed.__getitem__) + 1
    logs = [math.log10(lr) for lr in lrs[:end]]
    if end < 2:
        return 0

    def slope(i: int) -> float:
        lo, hi = max(i - 1, 0), min(i + 1, end - 1)
        return (smoothed[hi] - smoothed[lo]) / (logs[hi] - logs[lo])

    return min(range(end), key=slope)


def valley_index(smoothed: list[float]) -> int:
    """Two thirds of the way along the longest run of consecutive falls, up to the minimum
    (the first such run when two are equally long)."""
    end = min(range(len(smoothed)), key=smoothed.__getitem__)
    best_start, best_length, start = 0, 0, 0
    for i in range(1, end + 1):
        if smoothed[i] >= smoothed[i - 1]:
            start = i
        elif i - start > best_length:
            best_start, best_length = start, i - start
    return best_start + (2 * best_length) // 3


def suggest(lrs: list[float], smoothed: list[float]) -> tuple[float, float, float]:
    """(suggested, steepest, valley) learning rates for a smoothed trace; the suggestion is the valley's."""
    steepest = lrs[steepest_index(smoothed, lrs)]
    valley = lrs[valley_index(smoothed)]
    return valley, steepest, valley


def range_test(work: Workload, *, start_lr: float = 1e-7, end_lr: float = 10.0, num_steps: int = 100,
               beta: float = 0.98, diverge_factor: float = 4.0, batch_size: int | None = None) -> LRFinderResult:
    """Run the range test on a `Workload`; its model, optimizer, scheduler and RNGs are restored."""
    from torchwise.tune.state import preserved
    from torchwise.tune.workload import sample_batch, train_step

    batch_size = batch_size or work.cfg.train.batch_size
    lrs, losses = [], []
    stopped = f"reached end_lr {end_lr:g}"
    with preserved(work.model, work.optimizer, work.scheduler):
        work.model.train()
        for step, lr in enumerate(lr_schedule(start_lr, end_lr, num_steps)):
            for group in work.optimizer.param_groups:  # each group keeps its lr_multiplier
                group["lr"] = lr * group.get("lr_multiplier", 1.0)
            loss = float(train_step(work, sample_batch(work, batch_size, offset=step * batch_size)))
            lrs.append(lr)
            losses.append(loss)
            smoothed = smooth(losses, beta)
            if not math.isfinite(loss) or (step > 0 and smoothed[-1] > diverge_factor * min(smoothed)):
                stopped = f"loss passed {diverge_factor:g}x its best at lr {lr:.3g}"
                break
    finite = [i for i, loss in enumerate(losses) if math.isfinite(loss)]
    if len(finite) < 3:
        raise RunFailed(f"the LR range test diverged after {len(finite)} steps (from lr {start_lr:g})",
                        hint="start lower (--start-lr 1e-9), or check the data and the loss for NaN")
    lrs, losses = [lrs[i] for i in finite], [losses[i] for i in finite]
    smoothed = smooth(losses, beta)
    suggested, steepest, valley = suggest(lrs, smoothed)
    return LRFinderResult(lrs=lrs, losses=losses, smoothed=smoothed, suggested_lr=suggested, rule="valley",
                          steepest_lr=steepest, valley_lr=valley, stopped=stopped)


def plot(result: LRFinderResult, path: Path) -> Path:
    """Loss against LR (log scale), the smoothed curve, and both rules marked; a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed; the file is the output
    from matplotlib import pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.2))
    axes.plot(result.lrs, result.losses, ".", color="0.7", label="loss per step")
    axes.plot(result.lrs, result.smoothed, color="tab:blue", label="smoothed")
    axes.axvline(result.steepest_lr, color="tab:orange", linestyle=":",
                 label=f"steepest {result.steepest_lr:.2e}")
    axes.axvline(result.valley_lr, color="tab:red", linestyle="--",
                 label=f"valley {result.valley_lr:.2e} (suggested)")
    axes.set_xscale("log")
    axes.set_xlabel("learning rate")
    axes.set_ylabel("training loss")
    top = max(result.smoothed[0], min(result.smoothed)) * 1.5
    axes.set_ylim(min(min(result.losses), min(result.smoothed)) * 0.9, top)
    axes.legend()
    axes.set_title("LR range test")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def lr_range_test(model: Any, data: Any, *, config: Any = None, loss: Any = None, optimizer: Any = None,
                  scheduler: Any = None, start_lr: float = 1e-7, end_lr: float = 10.0, num_steps: int = 100,
                  batch_size: int | None = None) -> LRFinderResult:
    """`tune lr` from Python, on the ``model`` and ``data`` you would give `fit`."""
    from torchwise.tune.workload import from_objects

    work = from_objects(model, data, config=config, loss=loss, optimizer=optimizer, scheduler=scheduler)
    return range_test(work, start_lr=start_lr, end_lr=end_lr, num_steps=num_steps, batch_size=batch_size)
