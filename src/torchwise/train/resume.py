"""Resume: continue a run from `checkpoints/last` exactly as if it had never stopped.

A checkpoint holds the weights, optimizer and scaler state, the loop counters (epoch, step,
samples used in the epoch), early stopping, and every RNG. The data order is a pure function
of (seed, epoch), so the loader restarts at the same sample. The schedule is a pure function
of the step. What is left is to refuse resumes that cannot be exact.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchwise.config import RunConfig
from torchwise.errors import ResumeError

if TYPE_CHECKING:
    from torchwise.checkpoints.checkpoint import Checkpoint
    from torchwise.train.context import LoopContext, LoopState

# Overrides a resume may take: they extend or watch the run, never change a step's result.
# train.batch_size is per process: under another number of processes it must change so that the
# global batch (batch_size x processes) stays the same, which `check_config_unchanged` checks.
EXTENDING = ("train.epochs", "train.max_steps", "early_stop.", "log.", "checkpoint.", "train.batch_size")


def load_run_config(run_dir: Path, overrides: list[str] | tuple[str, ...] = (), *, trust_code: bool = False,
                    skip: tuple[str, ...] = ()) -> RunConfig:
    """The run's own resolved config, plus overrides that only extend it.

    Before anything the config names is imported or called: a foreign folder's code passes the
    trust gate (`check_run_trust`) or stops, and the config must be the one `checkpoints/last`
    was trained with. ``skip``: sections the caller supplies itself (``fit`` passes model and data).
    """
    from torchwise.checkpoints.checkpoint import read_meta
    from torchwise.runs.trust import open_run_config
    from torchwise.train.distributed import process_count

    for override in overrides:
        key = override.partition("=")[0]
        if not key.startswith(EXTENDING):
            raise ResumeError(f"resume cannot change {key!r}: it would change the steps already taken",
                              hint="resume may set train.epochs, train.max_steps, early_stop.*, log.*, "
                                   "checkpoint.*, and train.batch_size to keep the global batch under another "
                                   "number of processes; start a new run to change anything else")
    cfg = open_run_config(run_dir, trust_code=trust_code, skip=skip, overrides=overrides)
    check_config_unchanged(cfg, read_meta(run_dir / "checkpoints" / "last"), world=process_count(cfg))
    return cfg


def check_config_unchanged(cfg: RunConfig, meta: dict[str, Any], *, world: int = 1) -> None:
    """The config must be the one the checkpoint was trained with (its hash in meta.json), at the
    same global batch: ``world`` processes at train.batch_size each.

    Under another number of processes the per-process batch must change with it; the config is
    then compared as the checkpoint's processes ran it (its batch size put back).
    """
    saved_world = checkpoint_world(meta)
    saved_batch = (meta.get("trajectory") or {}).get("train", {}).get("batch_size", cfg.train.batch_size)
    if saved_batch * saved_world != cfg.train.batch_size * world:
        raise global_batch_changed(saved_batch=saved_batch, saved_world=saved_world,
                                   batch=cfg.train.batch_size, world=world)
    as_saved = cfg
    if cfg.train.batch_size != saved_batch:
        as_saved = cfg.model_copy(deep=True)
        as_saved.train.batch_size = saved_batch
    if meta.get("config_hash") != as_saved.config_hash():
        changed = sorted(_diff(meta.get("trajectory") or {}, as_saved.trajectory()))
        raise ResumeError(
            f"the run's config changed since the checkpoint ({', '.join(changed[:6]) or 'unknown keys'})",
            hint="resume with the config the run was trained with (its config.yaml), "
                 "or start a new run with model.init_from pointing at the checkpoint")


def checkpoint_world(meta: dict[str, Any]) -> int:
    """The processes that trained a checkpoint; older ones recorded it only when sharded (else 1)."""
    return int(meta.get("world_size") or (meta.get("sharded") or {}).get("world_size") or 1)


def global_batch_changed(*, saved_batch: int, saved_world: int, batch: int, world: int) -> ResumeError:
    """The refusal of a resume whose global batch (batch size x processes) differs, with the fix."""
    def processes(n: int) -> str:
        return f"{n} process{'es' if n > 1 else ''}"

    saved_global = saved_batch * saved_world
    message = (f"the run trained at a global batch of {saved_global} ({processes(saved_world)} x train.batch_size="
               f"{saved_batch}); {processes(world)} x train.batch_size={batch} would make it {batch * world}")
    if saved_global % world == 0:
        hint = (f"resume with train.batch_size={saved_global // world} under {processes(world)} "
                f"(train.batch_size is per process)")
    else:
        dividing = [n for n in range(1, saved_global + 1) if saved_global % n == 0]
        hint = (f"{saved_global} samples per batch cannot be split evenly over {processes(world)}; resume under "
                f"a number of processes that divides it ({', '.join(map(str, dividing[:8]))}), with "
                f"train.batch_size={saved_global} / processes")
    return ResumeError(message, hint=hint)


def check_resumable(cfg: RunConfig, checkpoint: Checkpoint, *, device: str, precision: str, world: int = 1) -> None:
    """The config must be the one the checkpoint was trained with, on the same kind of device and
    precision (`auto` may resolve differently on another machine), at the same global batch."""
    saved_setup = (checkpoint.meta.get("device", device), checkpoint.meta.get("precision", precision))
    if saved_setup != (device, precision):
        raise ResumeError(
            f"the run trained on {saved_setup[0]} in {saved_setup[1]}; this machine resolves to {device} in "
            f"{precision}, which would not continue the same run",
            hint=f"resume where the run started, or set train.device={saved_setup[0]} "
                 f"train.precision={saved_setup[1]} in a new run that starts from model.init_from")
    check_config_unchanged(cfg, checkpoint.meta, world=world)


def restore(ctx: LoopContext, checkpoint: Checkpoint) -> LoopState:
    """Load everything a checkpoint holds into a freshly built context; RNGs last."""
    from torchwise.checkpoints.checkpoint import check_compatible
    from torchwise.reproducibility import restore_rng_state
    from torchwise.train.context import LoopState
    from torchwise.train.optim import keep_loaded_implementation

    check_compatible(checkpoint, ctx.model)
    training = checkpoint.training_state
    if "sharded" in checkpoint.meta or (ctx.dist is not None and ctx.dist.kind == "fsdp"):
        from torchwise.train.sharded_checkpoint import restore_sharded

        restore_sharded(ctx, checkpoint)  # FSDP's checkpoint, or a sharded model: through DCP
    else:
        ctx.model.load_state_dict(checkpoint.model_state)
        ctx.optimizer.load_state_dict(training["optimizer"])
    keep_loaded_implementation(ctx.optimizer)
    for group in ctx.optimizer.param_groups:  # checkpoints from before groups carried their peak LR
        group.setdefault("peak_lr", ctx.cfg.optim.lr * group.get("lr_multiplier", 1.0))
    ctx.scaler.load_state_dict(training["scaler"])
    if ctx.scheduler is not None:
        ctx.scheduler.load_state_dict(training["scheduler"])
    # The tracker's record comes back; its settings (patience, min_delta) are the config's, which
    # a resume may extend.
    ctx.early_stop.load_state_dict({k: training["early_stop"][k] for k in ("best", "best_epoch", "best_step",
                                                                            "bad_evals")})
    state = LoopState(**training["loop"])
    state.status, state.reason = "running", None
    # Last: building the context drew from the RNGs (model init); the checkpoint's state wins.
    restore_rng_state(training["rng"])
    return state


def code_fingerprint(cfg: RunConfig) -> dict[str, str]:
    """sha256 of the source file of each module the config's targets name (model, data, loss...),
    found without importing anything (`torchwise.target_files`)."""
    from torchwise.runs.trust import code_targets

    prints = {}
    for item in code_targets(cfg):
        if item.origin.files and item.origin.files[-1].is_file():
            prints[item.origin.module] = hashlib.sha256(item.origin.files[-1].read_bytes()).hexdigest()
    return prints


def code_changes(saved: dict[str, str], now: dict[str, str]) -> list[str]:
    return sorted(name for name in saved.keys() | now.keys() if saved.get(name) != now.get(name))


def _diff(a: Any, b: Any, prefix: str = "") -> set[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        keys: set[str] = set()
        for key in a.keys() | b.keys():
            keys |= _diff(a.get(key), b.get(key), f"{prefix}{key}.")
        return keys
    return set() if json.dumps(a) == json.dumps(b) else {prefix.rstrip(".")}
