"""Which state goes into a checkpoint, and where: `checkpoints/last`, `best`, numbered ones.

The format itself (safetensors + meta.json, checksums, atomic swap) is `torchwise.checkpoints`.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchwise.config import RunConfig
from torchwise.data.streams import loader_state
from torchwise.reproducibility import capture_rng_state
from torchwise.runs.trust import sign_written

if TYPE_CHECKING:
    from torchwise.train.context import LoopContext, LoopState


class Checkpointer:
    """Writes `last` every epoch (and every N steps), `best` on improvement, keeps N numbered."""

    def __init__(self, run_cfg: RunConfig, *, directory: Path, main: bool = True, world: int = 1) -> None:
        from torchwise.checkpoints.checkpoint import cleanup_stale
        from torchwise.train.resume import code_fingerprint

        self.cfg = run_cfg.checkpoint
        self.directory = directory
        # What resume compares against: the settings that shape the weights, the user's code, and
        # the processes that trained (train.batch_size is per process: the global batch is both).
        self.identity = {"config_hash": run_cfg.config_hash(), "trajectory": run_cfg.trajectory(),
                         "code": code_fingerprint(run_cfg), "world_size": world}
        self.last_step = -1  # the step `last` holds, so `best` at the same step can share its files
        # Under torchrun every rank takes part in a save (its RNG state, and under FSDP its shard);
        # only rank 0 touches the folder.
        self.main = main
        if main:
            directory.mkdir(parents=True, exist_ok=True)
            cleanup_stale(directory)  # temp folders of a writer that crashed mid-save

    # After each save the run folder is signed again: its signature covers every meta.json
    # (runs/trust.py), and a folder this user wrote must stay trusted.
    def save_last(self, ctx: LoopContext, state: LoopState, *, sign: bool = True) -> None:
        """``sign=False``: a `save_best` of the same step follows and signs once for both."""
        from torchwise.checkpoints.checkpoint import copy_checkpoint, delete_checkpoint

        last = self.directory / "last"
        self._save(last, ctx, state)
        self.last_step = state.step
        if self.cfg.keep_last_n and self.main:
            copy_checkpoint(last, self.directory / f"step-{state.step:09d}")
            numbered = sorted(self.directory.glob("step-*"))
            for old in numbered[: -self.cfg.keep_last_n]:
                delete_checkpoint(old)
        if self.main and sign:
            sign_written(self.directory.parent)

    def save_best(self, ctx: LoopContext, state: LoopState) -> None:
        from torchwise.checkpoints.checkpoint import copy_checkpoint

        if self.last_step == state.step:  # the same state: link its files instead of writing them again
            if self.main:
                copy_checkpoint(self.directory / "last", self.directory / "best")
        else:
            self._save(self.directory / "best", ctx, state)
        if self.main:
            sign_written(self.directory.parent)

    def _save(self, path: Path, ctx: LoopContext, state: LoopState) -> None:
        from torchwise.checkpoints.checkpoint import save_checkpoint

        tracker = ctx.early_stop
        meta = {"step": state.step, "epoch": state.epoch, **self.identity,
                "device": ctx.device.type, "precision": ctx.precision.name,
                "best": {"metric": ctx.cfg.train.monitor,
                         "value": tracker.best if math.isfinite(tracker.best) else None,
                         "epoch": tracker.best_epoch, "step": tracker.best_step}}
        if ctx.dist is not None and ctx.dist.kind == "fsdp":
            from torchwise.train.sharded_checkpoint import save_sharded

            save_sharded(path, ctx, training_state=training_state(ctx, state), meta=meta)
            return
        if not self.main:  # DDP: rank 0 writes; this rank only hands over its RNG state
            training_state(ctx, state)
            return
        save_checkpoint(path, model_state=ctx.model.state_dict(), training_state=training_state(ctx, state),
                        meta=meta)


def training_state(ctx: LoopContext, state: LoopState) -> dict[str, Any]:
    """Everything besides the weights that exact resume needs."""
    return {
        "loop": asdict(state),
        # FSDP: the optimizer's sharded state goes to the checkpoint's DCP files instead
        "optimizer": {} if ctx.dist is not None and ctx.dist.kind == "fsdp" else ctx.optimizer.state_dict(),
        "scaler": ctx.scaler.state_dict(),
        "scheduler": ctx.scheduler.state_dict() if ctx.scheduler is not None else None,
        "early_stop": ctx.early_stop.state_dict(),
        "rng": capture_rng_state(),
        # under torchrun: every rank's own stream (its dropout masks), by rank; see `resume.restore_rng`
        "rng_ranks": rank_rng_states(ctx),
        # where a stateful stream is; None for any other data, and under torchrun, where this is
        # only rank 0's place (the resume restarts the epoch, and says so)
        "data": loader_state(ctx.train_loader) if ctx.dist is None else None,
    }


def rank_rng_states(ctx: LoopContext) -> list[dict[str, Any]] | None:
    """Collective under torchrun: every rank's RNG state, gathered to rank 0 (None elsewhere and in
    one process, whose stream is ``rng``)."""
    if ctx.dist is None:
        return None
    import torch.distributed as dist

    from torchwise.train.distributed import collective

    gathered: list[Any] | None = [None] * ctx.dist.world if ctx.dist.is_main else None
    with collective(ctx.dist, "gathering every rank's RNG state"):
        dist.gather_object(capture_rng_state(), gathered, dst=0)
    return gathered
