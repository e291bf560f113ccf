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
    from torchwise.runs.folder import RunFolder
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
    restore_rng(ctx, training)
    return state


def restore_rng(ctx: LoopContext, training: dict[str, Any]) -> None:
    """Each rank continues its own saved stream: rank r takes the state rank r saved.

    A checkpoint written by fewer processes (or by one) has no stream for the new ranks: rank 0
    continues the first, and each other rank keeps the fresh stream of ``train.seed + rank`` that
    it started with (event `rng_streams_started`). With dropout such a resume is a correct run,
    not a bit-exact continuation; at the world size the checkpoint was written with it is exact.
    """
    from torchwise.reproducibility import restore_rng_state

    rank = ctx.dist.rank if ctx.dist is not None else 0
    world = ctx.dist.world if ctx.dist is not None else 1
    saved = training.get("rng_ranks") or [training["rng"]]
    if rank < len(saved):
        restore_rng_state(saved[rank])
    if world > len(saved):
        ctx.run.log_event("rng_streams_started", ranks=list(range(len(saved), world)), saved_streams=len(saved),
                          seed=ctx.cfg.train.seed)


def respan_schedule(ctx: LoopContext, state: LoopState, *, total_steps: int | None) -> dict[str, Any] | None:
    """A resume that changes the run's length (train.epochs, train.max_steps) keeps the LR where it
    is: the decay re-spans from this step and its LR factor to the new end, with no second warmup
    (`schedules.lr_factor`'s ``respan``). Returns what changed, for the events; None if nothing."""
    from torchwise.train.schedules import lr_factor

    saved_total = state.planned_steps
    if ctx.scheduler is not None or saved_total is None or total_steps is None or saved_total == total_steps:
        return None
    schedule = ctx.cfg.schedule
    state.planned_steps = total_steps
    if schedule.name in ("constant", "step"):  # a function of the step alone: the length changes nothing
        return None
    factor = lr_factor(schedule, step=state.step, total_steps=saved_total, respan=state.schedule_from)
    state.schedule_from = [state.step, factor]
    return {"from_step": state.step, "lr_factor": factor, "planned_steps": [saved_total, total_steps]}


def config_changes(saved: dict[str, Any], cfg: RunConfig) -> dict[str, list[Any]]:
    """The overrides a resume took (`EXTENDING` keys only), as {dotted key: [saved, new]}."""
    from torchwise.runs.config_keys import flatten

    old, new = flatten(saved), flatten(cfg.to_yaml_dict())
    return {key: [old.get(key), value] for key, value in new.items()
            if key.startswith(EXTENDING) and json.dumps(old.get(key), default=str) != json.dumps(value, default=str)}


def with_changes(saved: dict[str, Any], changes: dict[str, list[Any]]) -> dict[str, Any]:
    """``saved`` (a config dict) with each changed dotted key set to its new value."""
    import copy

    config = copy.deepcopy(saved)
    for key, (_, value) in changes.items():
        *sections, leaf = key.split(".")
        node = config
        for section in sections:
            node = node.setdefault(section, {})
        node[leaf] = value
    return config


def resume_state(ctx: LoopContext, run: RunFolder) -> LoopState:
    """Load `checkpoints/last` into the context; say so in the events and on screen."""
    from torchwise.checkpoints.checkpoint import load_checkpoint
    from torchwise.data.loaders import EpochSampler
    from torchwise.data.streams import is_stream, restore_loader, resume_hint
    from torchwise.train.loop import epoch_limit, finished, planned_steps

    checkpoint = load_checkpoint(run.checkpoints / "last")
    check_resumable(ctx.cfg, checkpoint, device=ctx.device.type, precision=ctx.precision.name,
                    world=ctx.dist.world if ctx.dist else 1)
    state = restore(ctx, checkpoint)
    record_overrides(ctx, run, state)
    tracker = ctx.early_stop
    if tracker.should_stop:  # it stopped early: kept as it was, it would stop at the next evaluation
        ctx.progress.message(
            f"this run stopped early: {ctx.cfg.train.monitor} had not improved for {tracker.bad_evals} "
            f"evaluations; it goes on with a fresh patience of {tracker.patience} evaluations (raise "
            f"early_stop.patience to wait longer, or set early_stop.enabled=false to train every epoch)")
        run.log_event("early_stop_reset", step=state.step, bad_evals=tracker.bad_evals, patience=tracker.patience)
        tracker.bad_evals = 0
    loader = ctx.train_loader
    if finished(state, total_steps=planned_steps(ctx.cfg, loader), epochs=epoch_limit(ctx.cfg, loader)):
        ctx.progress.message(f"nothing left to train at epoch {state.epoch}, step {state.step}; to go on, "
                             f"extend the run: train.epochs={state.epoch + 10} or train.max_steps={state.step * 2}")
    # Mid-epoch, the data must start where the checkpoint left it: an EpochSampler starts at
    # samples_in_epoch by itself, a stateful stream takes its saved state; anything else replays.
    mid_epoch = state.samples_in_epoch > 0
    if mid_epoch and not isinstance(loader.sampler, EpochSampler) and \
            not restore_loader(loader, checkpoint.training_state.get("data")):
        hint = (resume_hint(loader, distributed=ctx.dist is not None) if is_stream(loader)
                else "pass the Dataset for an exact resume")
        ctx.progress.message(f"warning: this {'stream' if is_stream(loader) else 'DataLoader'} cannot restart "
                             f"mid-epoch; epoch {state.epoch + 1} starts over ({hint})")
        run.log_event("epoch_restarted", epoch=state.epoch, samples_skipped=state.samples_in_epoch, hint=hint)
        state.samples_in_epoch = 0
    changed = code_changes(checkpoint.meta.get("code", {}), code_fingerprint(ctx.cfg))
    if changed:
        ctx.progress.message(f"warning: {', '.join(changed)} changed since the checkpoint; "
                             "the resumed run is not an exact continuation")
        run.log_event("code_changed", modules=changed)
    # Where this segment starts: readers drop what a killed process logged after this step.
    run.log_metrics({"step": state.step, "epoch": state.epoch, "split": "resume"})
    run.log_event("resume", step=state.step, epoch=state.epoch, samples_in_epoch=state.samples_in_epoch,
                  world_size=ctx.dist.world if ctx.dist else 1, batch_size=ctx.cfg.train.batch_size)
    return state


def record_overrides(ctx: LoopContext, run: RunFolder, state: LoopState) -> None:
    """config.yaml takes the overrides this resume accepted (events.jsonl keeps the history), and
    a changed length re-spans the LR decay from here (`resume.respan_schedule`)."""
    from torchwise.runs.reader import read_run
    from torchwise.runs.trust import sign_written
    from torchwise.train.loop import planned_steps

    if ctx.dist is None or ctx.dist.is_main:
        saved = read_run(run.path).config
        changes = config_changes(saved, ctx.cfg)
        if changes:
            run.write_config(with_changes(saved, changes))
            sign_written(run.path)
            run.log_event("config_changed", step=state.step, changes=changes)
    respanned = respan_schedule(ctx, state, total_steps=planned_steps(ctx.cfg, ctx.train_loader))
    if respanned:
        run.log_event("schedule_respanned", step=state.step, **respanned)


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
