"""Guards the loop calls by name: early stopping, the best-metric tracker, out-of-memory retry."""

from __future__ import annotations

import gc
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import torch

from torchwise.data.batch import count_samples, slice_batch
from torchwise.errors import RunFailed

if TYPE_CHECKING:
    from torchwise.train.loop import Batch, LoopContext, LoopState


def monitor_mode(metric: str, mode: str) -> str:
    """``auto``: larger is better for accuracy-like metrics, smaller for losses and errors."""
    if mode != "auto":
        return mode
    larger_is_better = ("acc", "f1", "auc", "precision", "recall", "match", "iou", "dice", "r2")
    return "max" if any(word in metric for word in larger_is_better) else "min"


@dataclass
class EarlyStopping:
    """Counts evaluations without an improvement of at least ``min_delta``."""

    mode: str
    patience: int
    min_delta: float = 0.0
    best: float = math.nan
    best_epoch: int = -1
    best_step: int = -1
    bad_evals: int = 0

    def improved(self, value: float) -> bool:
        if math.isnan(self.best):
            return True
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def update(self, value: float, *, epoch: int, step: int) -> bool:
        """Record an evaluation; True when it is the best so far."""
        if self.improved(value):
            self.best, self.best_epoch, self.best_step, self.bad_evals = value, epoch, step, 0
            return True
        self.bad_evals += 1
        return False

    @property
    def should_stop(self) -> bool:
        return self.bad_evals >= self.patience

    def state_dict(self) -> dict:
        return asdict(self)

    def load_state_dict(self, state: dict) -> None:
        for key, value in state.items():
            setattr(self, key, value)


def shrink_after_oom(ctx: LoopContext, state: LoopState, window: list[Batch]) -> None:
    """Out of memory: free what we can and run each micro-batch in twice as many pieces.

    The loader, the window and the weighting stay as they were, so the effective batch and
    the samples of every step are unchanged; only the size of one forward/backward halves.
    """
    batch_size = max(count_samples(batch) for batch in window)
    old_piece = math.ceil(batch_size / state.micro_splits)
    # Gradients of a half-done backward hold memory and would be added to the retry's.
    ctx.optimizer.zero_grad(set_to_none=True)
    if ctx.scaler.is_enabled():
        # An OOM after unscale_ leaves the scaler expecting update(); the retry starts over.
        ctx.scaler._per_optimizer_states.clear()
    gc.collect()
    if ctx.device.type == "cuda":
        torch.cuda.empty_cache()
    if old_piece <= 1:
        raise RunFailed(f"out of memory at step {state.step} even with a micro-batch of 1 sample",
                        hint="use a smaller model, train.precision=bf16, or a device with more memory")
    old_splits = state.micro_splits
    state.micro_splits *= 2
    new_piece = math.ceil(batch_size / state.micro_splits)
    accumulate = ctx.cfg.train.accumulate
    ctx.run.log_event("oom_retry", step=state.step, micro_batch=[old_piece, new_piece],
                      accumulate=[accumulate * old_splits, accumulate * state.micro_splits],
                      effective_batch=batch_size * accumulate)
    ctx.progress.message(f"out of memory at step {state.step}: micro-batch {old_piece} -> {new_piece}, "
                         f"accumulate {accumulate * old_splits} -> {accumulate * state.micro_splits} "
                         "(same effective batch); retrying")


def split_pieces(window: list[Batch], *, batch_size: int, splits: int) -> list[Batch]:
    """The window's micro-batches cut into pieces of ``ceil(batch_size / splits)`` samples
    (a short last batch gives fewer pieces, as a loader of that batch size would)."""
    size = math.ceil(batch_size / splits)
    return [slice_batch(batch, start, start + size) for batch in window
            for start in range(0, count_samples(batch), size)]
