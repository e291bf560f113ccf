"""One run, from a resolved config to a finished run folder.

Construction is spelled out in order: seed, run folder, data, device and precision, model,
optimizer, scaler, loaders, a preflight check of one batch, then the loop.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from torchwise.checkpoints.load import MODEL_RECORD, model_record
from torchwise.config import RunConfig
from torchwise.data.batch import collate
from torchwise.data.loaders import build_loader
from torchwise.data.prepare import prepare_data
from torchwise.data.streams import check_schedule, workers_repeat
from torchwise.errors import ConfigError, TorchwiseError
from torchwise.models import build_model, with_options
from torchwise.reproducibility import seed_everything, seed_rank
from torchwise.runs.environment import environment
from torchwise.runs.folder import RunFolder
from torchwise.runs.progress import ProgressView, make_progress
from torchwise.runs.record import earlier_segments, segment, timing
from torchwise.runs.snapshot import restore_snapshot, take_snapshot
from torchwise.runs.trust import sign_written
from torchwise.train.checkpointer import Checkpointer
from torchwise.train.context import LoopContext, LoopState
from torchwise.train.distributed import (
    CollectiveFailed,
    Distributed,
    agree_start,
    check_metrics,
    ddp_model,
    process_count,
    rank_run_folder,
    shard_loader,
    shard_model,
    start_distributed,
    stop_distributed,
)
from torchwise.train.guards import EarlyStopping, monitor_mode
from torchwise.train.loop import NonFiniteStep, epoch_limit, finished, planned_steps, train
from torchwise.train.loss_kind import loss_kind
from torchwise.train.observed import ObservedData
from torchwise.train.optim import build_optimizer, build_scheduler
from torchwise.train.precision import Precision, pick_device
from torchwise.train.preflight import name_nonfinite, preflight
from torchwise.train.rank_failures import clear_notes, leave_note
from torchwise.train.resume import resume_state
from torchwise.train.run_facts import DATA_FACTS, run_facts
from torchwise.train.run_record import (
    check_monitor,
    finish_summary,
    record_config,
    record_data,
    record_failure,
    write_diagnosis,
)
from torchwise.train.signals import StartUpInterrupted, interrupt_start_up, stop_on_signals
from torchwise.train.tasks import build_task


@dataclass
class RunResult:
    """What `fit` and `torchwise train` return: where the run is and how it ended."""

    run_dir: Path
    summary: dict[str, Any]

    @property
    def status(self) -> str:
        return self.summary["status"]

    @property
    def best(self) -> dict[str, Any] | None:
        return self.summary.get("best")


@dataclass
class UserObjects:
    """Python objects that fit() takes in place of config entries (see `fit`)."""

    loss: Any = None
    optimizer: Any = None  # a function of torchwise's parameter groups returning an Optimizer
    scheduler: Any = None  # a function of the optimizer returning an LR scheduler
    metrics: dict[str, Any] | None = None

    def record(self, cfg: RunConfig) -> None:
        """Write each object into the config by qualified name and arguments (and a note where
        that record cannot rebuild it), so config.yaml says what the run trained with."""
        from torchwise.config import ObjectSpec
        from torchwise.targets import record_of

        if self.loss is not None:
            cfg.task.loss = ObjectSpec(**record_of(self.loss))
        if self.metrics is not None:
            cfg.task.metrics = {name: ObjectSpec(**record_of(obj)) for name, obj in self.metrics.items()}
        for section, obj in ((cfg.optim, self.optimizer), (cfg.schedule, self.scheduler)):
            if obj is not None:
                record = record_of(obj)
                section.target, section.kwargs, section.note = record["target"], record["kwargs"], record["note"]
        if self.optimizer is not None:
            cfg.optim.note = cfg.optim.note or "a factory passed to fit(): it sets the LR, not optim.lr"


def check_rebuildable(cfg: RunConfig, objects: UserObjects) -> None:
    """A resume must get back each object that config.yaml records only by a note."""
    missing = [key for key, spec, given in (
        ("task.loss", cfg.task.loss, objects.loss), ("optim", cfg.optim, objects.optimizer),
        ("schedule", cfg.schedule, objects.scheduler)) if spec is not None and spec.note and given is None]
    missing += [f"task.metrics.{name}" for name, spec in cfg.task.metrics.items()
                if spec.note and name not in (objects.metrics or {})]
    if missing:
        raise ConfigError(f"this run trained with Python objects that its config.yaml cannot rebuild: "
                          f"{', '.join(missing)}",
                          hint="resume from Python with the same objects: torchwise.fit(model, data, resume=RUN_DIR, "
                               "loss=..., optimizer=..., scheduler=..., metrics=...)")


def run_training(cfg: RunConfig, *, runs_dir: Path | None = None, name: str | None = None,
                 model: nn.Module | None = None, train_data: Dataset | DataLoader | None = None,
                 val_data: Dataset | DataLoader | None = None, progress: str | None = None,
                 resume_dir: Path | None = None, objects: UserObjects | None = None,
                 on_evaluation: Callable[[LoopState, float], bool] | None = None) -> RunResult:
    """Train once and write the run folder; with ``resume_dir``, continue that run from
    `checkpoints/last`. Bad input raises a `TorchwiseError` and the summary says `failed`.

    A signal during start-up (before the first step) ends the run as `interrupted`, with no
    checkpoint: in one process at once; under torchrun each rank notes it and all of them stop
    together where start-up ends (`agree_start`), so no rank waits for one that left.

    ``on_evaluation``: the loop's one hook (train/loop.py), e.g. a sweep's pruner."""
    objects = objects or UserObjects()
    objects.record(cfg)
    check_rebuildable(cfg, objects)
    signals: list[str] = []  # under torchrun: the signals this rank saw, until all ranks agree
    torchrun = process_count(cfg) > 1
    with stop_on_signals(signals, escalate=False) if torchrun else interrupt_start_up():
        return train_run(cfg, runs_dir=runs_dir, name=name, model=model, train_data=train_data,
                         val_data=val_data, progress=progress, resume_dir=resume_dir, objects=objects,
                         signals=signals, on_evaluation=on_evaluation)


def train_run(cfg: RunConfig, *, runs_dir: Path | None, name: str | None, model: nn.Module | None,
              train_data: Dataset | DataLoader | None, val_data: Dataset | DataLoader | None,
              progress: str | None, resume_dir: Path | None, objects: UserObjects,
              signals: list[str], on_evaluation: Callable[[LoopState, float], bool] | None) -> RunResult:
    """`run_training` with its signal handling in place."""
    seed_everything(cfg.train.seed, deterministic=cfg.train.deterministic)
    dist = start_distributed(cfg)  # under torchrun: join the group; rank 0 alone writes the run folder
    if dist is not None:
        dist.signals = signals
    main = dist is None or dist.is_main
    parent = runs_dir or Path("runs")
    parent_existed = parent.is_dir()
    before = take_snapshot(resume_dir) if resume_dir is not None and main else None  # a refused resume puts it back
    run = rank_run_folder(dist, lambda: open_run_folder(cfg, parent=parent, name=name, resume_dir=resume_dir))
    if dist is not None:
        dist.run_path = run.path
    progress = progress if main else "off"
    training_started = False
    idle = False  # a resume with nothing left to train: the run folder stays as it was
    started = time.time()
    earlier = earlier_segments(run.path) if resume_dir is not None else []  # a resumed run's past segments
    summary: dict[str, Any] = {"status": "running", "name": run.path.name,
                               **timing([*earlier, segment(started=started, finished=None, status="running")])}
    run.write_summary(summary)
    view = make_progress(progress or cfg.log.progress)
    state = LoopState()
    ctx: LoopContext | None = None
    try:
        if cfg.log.tensorboard:
            run.enable_tensorboard()
        if cfg.log.mlflow:
            run.enable_mlflow(cfg.to_yaml_dict(), uri=cfg.log.mlflow_uri, experiment=cfg.log.mlflow_experiment)
        ctx = build_context(cfg, run=run, view=view, model=model, train_data=train_data, val_data=val_data,
                            objects=objects, dist=dist)
        if dist is not None:  # the same weights on every rank, then each rank its own dropout masks
            seed_rank(cfg.train.seed, dist.rank)
        ctx.on_evaluation = on_evaluation
        if resume_dir is not None:
            state = resume_state(ctx, run)
            summary["resumed_at_step"], summary["resumed_samples"] = state.step, state.samples_total
            # A run that ended (its summary says so) and has nothing left: nothing is rewritten.
            # One killed after its last checkpoint goes through the loop, which records the end.
            idle = bool(earlier) and earlier[-1].get("status") in ("completed", "early_stopped") and finished(
                state, total_steps=planned_steps(cfg, ctx.train_loader), epochs=epoch_limit(cfg, ctx.train_loader))
        early = agree_start(dist) if dist is not None else None  # every rank: start-up done, any signal?
        if early is not None:
            state.status, state.reason = "interrupted", f"stopped by {early} during start-up, before the first step"
            run.log_event("interrupted", step=state.step, signal=early, reason=state.reason)
        elif not idle:
            # Under torchrun a signal is first this rank's own; the loop stops when all ranks agree.
            with stop_on_signals(dist.signals if dist else ctx.stop_requested, escalate=dist is None):
                training_started = True
                train(ctx, state)
    except NonFiniteStep as err:
        raise record_failure(run, state, name_nonfinite(ctx, err)) from None
    except TorchwiseError as err:
        first_failure(dist, err.message, err)
        raise record_failure(run, state, err) from None
    except StartUpInterrupted as err:  # one process, a signal before the first step: nothing to save
        state.status, state.reason = "interrupted", f"stopped by {err.signal} during start-up, before the first step"
        run.log_event("interrupted", step=state.step, signal=err.signal, reason=state.reason)
    except KeyboardInterrupt:  # a second Ctrl-C mid-step: no checkpoint, but say what happened
        state.status, state.reason = "interrupted", "stopped by a second signal mid-step; last not updated"
        run.log_event("interrupted", step=state.step, reason=state.reason)
        raise
    except Exception as err:  # a crash in user code: record it, then let the caller explain it
        state.status, state.reason = "failed", f"{type(err).__name__}: {err}"
        first_failure(dist, state.reason, err)
        run.log_event("failed", step=state.step, reason=state.reason)
        raise
    finally:
        view.close()
        done_before = summary.get("resumed_samples", 0)
        summary.update(finish_summary(ctx, state, started=started, samples_before=done_before))
        summary.update(timing([*earlier, segment(started=started, finished=time.time(), status=summary["status"])]))
        run.write_summary(summary)
        if ctx is not None and ctx.observed is not None:  # a run that stopped inside its first epoch
            ctx.observed.write(run)
        if main:
            write_diagnosis(run)
            if summary["status"] != "failed":  # a failed rank's note stays for the others to read
                clear_notes(run.path)
        run.close()
        if not main:
            pass
        elif resume_dir is not None and (idle or (summary["status"] == "failed" and not training_started)):
            restore_snapshot(before)  # a refused or idle resume changes nothing in the run folder
            if idle:
                summary = json.loads(before.contents.get("summary.json", b"{}")) or summary
        elif summary["status"] == "failed" and resume_dir is None and state.step == 0:
            discard_run_folder(run.path, parent=None if parent_existed else parent)
        stop_distributed(dist, clean=summary["status"] != "failed")  # every rank got here, or one failed
    return RunResult(run_dir=run.path, summary=summary)


def first_failure(dist: Distributed | None, reason: str, err: BaseException) -> None:
    """Under torchrun, a rank's own failure (not a broken collective) leaves a note naming it, before
    this rank leaves the group and the others' collectives break (train/rank_failures.py)."""
    if dist is not None and dist.run_path is not None and not isinstance(err, CollectiveFailed):
        leave_note(dist.run_path, rank=dist.rank, world=dist.world, reason=reason)


def open_run_folder(cfg: RunConfig, *, parent: Path, name: str | None, resume_dir: Path | None) -> RunFolder:
    if resume_dir is not None:
        run = RunFolder(resume_dir)
        clear_notes(run.path)  # an earlier segment's ranks' (before the other ranks learn the path)
        return run
    run = RunFolder.create(parent, name or cfg.name or "run")
    record_config(run, cfg)
    return run


def discard_run_folder(path: Path, *, parent: Path | None) -> None:
    """A run that failed before its first step trained nothing: leave no folder behind (the
    error says what was wrong), and no empty ``runs/`` that this run made either."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)
    if parent is not None:
        with contextlib.suppress(OSError):  # not empty: another run started there meanwhile
            parent.rmdir()


def build_context(cfg: RunConfig, *, run: RunFolder, view: ProgressView, model: nn.Module | None,
                  train_data: Dataset | DataLoader | None, val_data: Dataset | DataLoader | None,
                  objects: UserObjects, dist: Distributed | None = None) -> LoopContext:
    """Everything the loop needs, built in order and checked before the first step."""
    train_set = train_data.dataset if isinstance(train_data, DataLoader) else train_data
    val_set = val_data.dataset if isinstance(val_data, DataLoader) else val_data
    collate_fn = train_data.collate_fn if isinstance(train_data, DataLoader) else collate
    builtin = model is None and cfg.model.target is None
    data = prepare_data(cfg, train=train_set, val=val_set, collate_fn=collate_fn, builtin_model=builtin)
    record_data(run, view, data)
    device = dist.device if dist else pick_device(cfg.train.device)
    precision = Precision.resolve(cfg.train.precision, device)
    from_config = model is None
    if model is None:
        model = build_model(cfg.model, sample_shape=data.sample_shape, out_features=data.out_features,
                            base_dir=cfg.base_dir)
    else:  # a model from Python: model.gradient_checkpointing and model.lora still apply
        model = with_options(model, cfg.model)
    run.write_json(MODEL_RECORD, model_record(model, from_config=from_config, sample_shape=data.sample_shape,
                                              out_features=data.out_features))
    sign_written(run.path)  # model.json and data_stats.json decide what a load builds: signed too
    if cfg.model.lora is not None:  # only the adapters train: say how many weights that is
        from torchwise.models.hf import parameter_counts

        run.log_event("lora", **parameter_counts(model), target_modules=cfg.model.lora.target_modules)
    model = model.to(device)
    if cfg.model.init_from is not None:
        from torchwise.checkpoints.weights import load_foreign_weights

        report = load_foreign_weights(model, cfg.resolve_path(cfg.model.init_from), strict=cfg.model.strict)
        run.log_event("init_from", path=str(cfg.model.init_from), loaded=len(report.loaded),
                      missing=report.missing, unexpected=report.unexpected,
                      shape_mismatches=[key for key, _, _ in report.shape_mismatches])
        if not report.ok:
            view.message(f"init_from: loaded {len(report.loaded)} tensors; {report.describe()}")
    task = build_task(cfg.task, base_dir=cfg.base_dir, loss=objects.loss, metrics=objects.metrics).to(device)
    pin = cfg.data.pin_memory if cfg.data.pin_memory != "auto" else device.type == "cuda"
    train_loader = train_data if isinstance(train_data, DataLoader) else build_loader(
        data.train, batch_size=cfg.train.batch_size, shuffle=cfg.data.shuffle, seed=cfg.train.seed,
        num_workers=cfg.data.num_workers, pin_memory=pin, persistent_workers=cfg.data.persistent_workers)
    val_loader = val_data if isinstance(val_data, DataLoader) else None
    if val_loader is None and data.val is not None:
        val_loader = build_loader(data.val, batch_size=cfg.train.batch_size * 2, shuffle=False,
                                  seed=cfg.train.seed, num_workers=0, pin_memory=pin, persistent_workers=False)
    facts = run_facts(model, task=cfg.task.type, train=data.train, loader=train_loader, val=data.val,
                      ignore_index=cfg.task.ignore_index)
    run.write_json("facts.json", facts)
    check_schedule(cfg, train_loader, own_scheduler=objects.scheduler is not None or cfg.schedule.target is not None)
    if workers_repeat(train_loader):
        run.log_event("stream_not_sharded", num_workers=train_loader.num_workers)
        view.message(f"warning: the first batches of two of the {train_loader.num_workers} workers are the same: "
                     "the stream does not shard itself, so every sample is read once per worker; split it in "
                     "__iter__ with torch.utils.data.get_worker_info() (see README, Training from a stream)")
    found = preflight(model, task, data, {"training": train_loader, "validation": val_loader},
                      device=device, precision=precision)
    facts["loss"] = loss_kind(task, model_loss=found.model_loss)
    run.write_json("facts.json", facts)
    # A custom Dataset or a stream: its data facts come from the batches the first epoch trains on.
    observed = None if DATA_FACTS & facts.keys() else ObservedData(task=cfg.task.type, base=facts,
                                                                  ignore_index=cfg.task.ignore_index)
    if found.float64_to is not None:
        run.log_event("float64_converted", to=str(found.float64_to).removeprefix("torch."))
        view.message(f"warning: the data holds float64 tensors (numpy's default); they are converted to "
                     f"{str(found.float64_to).removeprefix('torch.')} to meet the model")
    if found.loss_dict is not None:
        run.log_event("loss_dict", **found.loss_dict)
    if found.dropped_metrics:
        run.log_event("metrics_dropped", metrics=found.dropped_metrics,
                      reason="the model's own loss: its output does not fit the built-in metrics")
    if dist is not None and dist.kind == "fsdp":
        shard_model(model, cfg=cfg, precision=precision)  # in place, before the optimizer sees the parameters
    forward = torch.compile(model) if cfg.train.compile else model
    if dist is not None:
        forward = ddp_model(dist, forward) if dist.kind == "ddp" else forward
        shard_loader(dist, train_loader, what="training")
        if val_loader is not None:
            shard_loader(dist, val_loader, what="validation")
        check_metrics(task.metrics)
    optimizer = build_optimizer(model, cfg.optim, factory=objects.optimizer, base_dir=cfg.base_dir)
    scheduler = build_scheduler(optimizer, cfg.schedule, factory=objects.scheduler, base_dir=cfg.base_dir)
    check_monitor(cfg, run, task, has_val=val_loader is not None)
    mode = monitor_mode(cfg.train.monitor, cfg.train.monitor_mode)
    # Without early stopping the tracker still picks the best checkpoint; it just never stops.
    patience = cfg.early_stop.patience if cfg.early_stop.enabled else sys.maxsize
    run.write_json("env.json", environment(device=device, precision=precision, cfg=cfg, dist=dist))
    return LoopContext(
        cfg=cfg, model=model, forward=forward, optimizer=optimizer, scaler=precision.make_scaler(),
        task=task, train_loader=train_loader, val_loader=val_loader, device=device, precision=precision,
        run=run, progress=view,
        early_stop=EarlyStopping(mode=mode, patience=patience, min_delta=cfg.early_stop.min_delta),
        # Every rank takes part in a save (its RNG state; FSDP: its shard); rank 0 writes the folder.
        checkpoints=Checkpointer(cfg, directory=run.checkpoints, main=dist is None or dist.is_main,
                                 world=dist.world if dist else 1) if cfg.checkpoint.enabled else None,
        scheduler=scheduler, float64_to=found.float64_to, dist=dist,
        val_loss_in_train_mode=found.val_loss_in_train_mode, observed=observed,
    )
