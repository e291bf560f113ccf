"""Early stopping and the best-metric tracker the loop calls by name (OOM retry: `train/oom.py`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


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
