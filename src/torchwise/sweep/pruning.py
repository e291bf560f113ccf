"""The pruning callback: the loop's `on_evaluation` hook, reporting to an Optuna trial.

At every evaluation the run calls it with its state and the monitored value (train/loop.py). It
reports the value to the trial at the evaluation's position (epochs done for runs that evaluate
once an epoch, optimizer steps with ``train.eval_every``, so trials compare like with like) and
answers the pruner's verdict: True ends the run as ``pruned``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torchwise.train.context import LoopState


@dataclass
class TrialReporter:
    """``trial``: an Optuna trial; ``by_steps``: position by optimizer steps, not epochs."""

    trial: Any
    by_steps: bool = False
    on_report: Any = None  # called after each report (the sweep's live table); None: nothing

    def __call__(self, state: LoopState, value: float) -> bool:
        # An evaluation at an epoch's end runs after the epoch counter moved on: epochs done.
        position = state.step if self.by_steps else max(state.epoch, 1)
        self.trial.report(value, position)
        if self.on_report is not None:
            self.on_report()
        return bool(self.trial.should_prune())
