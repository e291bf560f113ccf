"""Guards the loop calls by name: early stopping, the best-metric tracker, out-of-memory retry."""

from __future__ import annotations

import gc
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import torch
from torch.utils.data import DataLoader

from torchwise.data.loaders import EpochSampler
from torchwise.errors import RunFailed

if TYPE_CHECKING:
    from torchwise.train.loop import Batch, LoopContext


def monitor_mode(metric: str, mode: str) -> str:
    """``auto``: larger is better for accuracy-like metrics, smaller for losses and errors."""
    if mode != "auto":
        return mode
    return "max" if any(word in metric for word in ("acc", "f1", "auc", "precision", "recall")) else "min"


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


def shrink_after_oom(ctx: LoopContext, window: list[Batch], *, step: int) -> list[Batch]:
    """Out of memory: free what we can, halve the micro-batch and double accumulation so the
    effective batch stays the same, and return the same window split into smaller pieces."""
    micro = max(len(y) for _, y in window)
    # Gradients of a half-done backward hold memory and would be added to the retry's.
    ctx.optimizer.zero_grad(set_to_none=True)
    gc.collect()
    if ctx.device.type == "cuda":
        torch.cuda.empty_cache()
    if micro <= 1:
        raise RunFailed(f"out of memory at step {step} even with a micro-batch of 1 sample",
                        hint="use a smaller model, train.precision=bf16, or a device with more memory")
    if not isinstance(ctx.train_loader.sampler, EpochSampler):
        raise RunFailed(f"out of memory at step {step} with a DataLoader built outside torchwise",
                        hint="pass the Dataset to fit() so the micro-batch can be shrunk, or lower its batch_size")
    smaller = (micro + 1) // 2
    train_cfg = ctx.cfg.train
    old = (train_cfg.batch_size, train_cfg.accumulate)
    train_cfg.batch_size, train_cfg.accumulate = smaller, train_cfg.accumulate * 2
    loader = ctx.train_loader
    ctx.train_loader = DataLoader(
        loader.dataset, batch_size=smaller, sampler=loader.sampler, num_workers=loader.num_workers,
        pin_memory=loader.pin_memory, persistent_workers=loader.persistent_workers,
        worker_init_fn=loader.worker_init_fn, generator=loader.generator)
    ctx.run.log_event("oom_retry", step=step, micro_batch=[old[0], smaller], accumulate=[old[1], train_cfg.accumulate],
                      effective_batch=smaller * train_cfg.accumulate)
    ctx.progress.message(f"out of memory at step {step}: micro-batch {old[0]} -> {smaller}, "
                         f"accumulate {old[1]} -> {train_cfg.accumulate} (same effective batch); retrying")
    return [(x[i:i + smaller], y[i:i + smaller]) for x, y in window for i in range(0, len(y), smaller)]
