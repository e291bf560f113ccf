"""What the loop carries: `LoopContext` (what a run trains with) and `LoopState` (where it is).

Their own module so that the loop and the guards it calls both read them without importing
each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from torchwise.config import RunConfig
from torchwise.runs.folder import RunFolder
from torchwise.runs.progress import ProgressView
from torchwise.train.guards import EarlyStopping
from torchwise.train.precision import Precision
from torchwise.train.tasks import Task

Batch = Any  # a collated batch of any structure (data/batch.py)


@dataclass
class LoopState:
    """Counters a checkpoint restores: where the run is."""

    epoch: int = 0
    step: int = 0
    samples_in_epoch: int = 0
    samples_total: int = 0
    nonfinite_skips: int = 0
    micro_splits: int = 1  # each loaded micro-batch runs in this many pieces (raised on OOM)
    last_eval_step: int = -1
    # Step losses already read from the device: the open log window and the epoch so far.
    log_loss_sum: float = 0.0
    log_loss_count: int = 0
    epoch_loss_sum: float = 0.0
    epoch_loss_count: int = 0
    # The optimizer steps the schedule spanned when this state was saved, and where an extended
    # run's decay starts over ([step, LR factor]: see `schedules.lr_factor`, `resume.respan_schedule`).
    planned_steps: int | None = None
    schedule_from: list[float] | None = None
    status: str = "running"
    reason: str | None = None


@dataclass
class LoopContext:
    """What one run trains with. `model` is the plain module; `forward` may be its compiled twin."""

    cfg: RunConfig
    model: nn.Module
    forward: nn.Module
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    task: Task
    train_loader: DataLoader
    val_loader: DataLoader | None
    device: torch.device
    precision: Precision
    run: RunFolder
    progress: ProgressView
    early_stop: EarlyStopping
    checkpoints: Any = None  # a Checkpointer, or None when checkpoints are off
    stop_requested: list[str] = field(default_factory=list)  # set by signal handlers
    last_metrics: dict[str, float] = field(default_factory=dict)  # the latest evaluation
    params: list[torch.Tensor] = field(default_factory=list)  # what clipping and the norm cover
    scheduler: Any = None  # the user's LR scheduler; None: torchwise's schedule sets the LR
    float64_to: torch.dtype | None = None  # float64 inputs are cast to the model's dtype (preflight saw them)
    dist: Any = None  # under torchrun: train.distributed.Distributed; None for one process
    val_loss_in_train_mode: bool = False  # eval mode gives detections, not a loss (preflight saw it)
    observed: Any = None  # train/observed.ObservedData: a custom Dataset's facts, from the first epoch's batches
    # The one hook (see train/loop.py's docstring): after each evaluation, given the state and the
    # monitored value; True ends the run as `pruned` (a sweep's pruner). None: nothing is called.
    on_evaluation: Callable[[LoopState, float], bool] | None = None

    def __post_init__(self) -> None:
        self.params = [p for group in self.optimizer.param_groups for p in group["params"]]
