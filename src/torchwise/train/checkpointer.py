"""Which state goes into a checkpoint, and where: `checkpoints/last`, `best`, numbered ones.

The format itself (safetensors + meta.json, checksums, atomic swap) is `train/checkpoint.py`.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import math
from torchwise.config import CheckpointConfig
from torchwise.reproducibility import capture_rng_state

if TYPE_CHECKING:
    from torchwise.train.loop import LoopContext, LoopState


class Checkpointer:
    """Writes `last` every epoch (and every N steps), `best` on improvement, keeps N numbered."""

    def __init__(self, cfg: CheckpointConfig, *, directory: Path, config_hash: str) -> None:
        self.cfg = cfg
        self.directory = directory
        self.config_hash = config_hash
        from torchwise.train.checkpoint import cleanup_stale

        directory.mkdir(parents=True, exist_ok=True)
        cleanup_stale(directory)  # temp folders of a writer that crashed mid-save

    def save_last(self, ctx: LoopContext, state: LoopState) -> None:
        self._save(self.directory / "last", ctx, state, kind="last")
        if self.cfg.keep_last_n:
            self._save(self.directory / f"step-{state.step:09d}", ctx, state, kind="numbered")
            numbered = sorted(self.directory.glob("step-*"))
            for old in numbered[: -self.cfg.keep_last_n]:
                shutil.rmtree(old, ignore_errors=True)

    def save_best(self, ctx: LoopContext, state: LoopState) -> None:
        self._save(self.directory / "best", ctx, state, kind="best")

    def _save(self, path: Path, ctx: LoopContext, state: LoopState, *, kind: str) -> None:
        from torchwise.train.checkpoint import save_checkpoint

        save_checkpoint(
            path,
            model_state=ctx.model.state_dict(),
            training_state=training_state(ctx, state),
            meta={"kind": kind, "step": state.step, "epoch": state.epoch,
                  "config_hash": self.config_hash,
                  "best": {"metric": ctx.cfg.train.monitor, "value": _finite_or_none(ctx.early_stop.best),
                           "epoch": ctx.early_stop.best_epoch, "step": ctx.early_stop.best_step}},
        )


def training_state(ctx: LoopContext, state: LoopState) -> dict[str, Any]:
    """Everything besides the weights that exact resume needs."""
    return {
        "loop": asdict(state),
        "optimizer": ctx.optimizer.state_dict(),
        "scaler": ctx.scaler.state_dict(),
        "early_stop": ctx.early_stop.state_dict(),
        "rng": capture_rng_state(),
    }


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None
