"""The training loop, top to bottom.

For every optimizer step::

    fetch the window's micro-batches (accumulate of them), moved to the device
    for each micro-batch (any structure: see data/batch.py for the calling convention):
        forward under autocast: model(*inputs) / model(**inputs) / model(inputs)
        loss (yours, else the model's own `loss`, else the task's)
        loss * (micro-batch samples / window samples)     # a partial window is weighted right
        backward (scaled when fp16)
    unscale, clip the global grad norm, check loss and norm are finite
    optimizer step, scaler update, zero_grad(set_to_none=True)
    LR for the next step from the schedule (or your scheduler.step(); ReduceLROnPlateau at evaluation)
    every log.every_n_steps: read the loss (the only routine host sync), log (with the host
        seconds per step spent waiting for data and in the whole step: timestamps, no sync)
    every train.eval_every steps and every epoch end: validate, checkpoint, early-stop
        (then the one hook: ctx.on_evaluation(state, monitored value) -> True stops the run as
        `pruned`; `torchwise sweep` passes its Optuna pruner here, a plain run passes nothing)

Everything the loop needs arrives in a `LoopContext`; everything a checkpoint must restore
lives in `LoopState` (both in `train/context.py`) (plus model, optimizer, scaler, early stopping and the RNGs).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.utils.data import DataLoader

from torchwise.config import RunConfig
from torchwise.data.batch import call_model, count_samples, output_logits, split_batch, to_device
from torchwise.data.loaders import EpochSampler, start_epoch
from torchwise.data.streams import batches_in_epoch, is_stream, step_based
from torchwise.errors import RunFailed
from torchwise.train.context import Batch, LoopContext, LoopState
from torchwise.train.distributed import (
    agree_window,
    clip_shards,
    grad_sync,
    local_tensors,
    reduce_eval,
    reduce_step,
    step_samples,
    validation_collectives,
)
from torchwise.train.grad_stats import after_step, before_step, layer_names
from torchwise.train.model_mode import unchanged
from torchwise.train.oom import shrink_after_oom, split_pieces
from torchwise.train.optim import set_lr, steps_on_metric
from torchwise.train.schedules import lr_factor


def batches_per_epoch(loader: DataLoader) -> int | None:
    """Micro-batches in a whole epoch (also when the sampler starts mid-epoch after a resume);
    None for a stream of unknown length."""
    sampler = loader.sampler
    if isinstance(sampler, EpochSampler) and loader.batch_size:  # under torchrun: global batches
        return math.ceil(sampler.size / (loader.batch_size * sampler.world))
    return batches_in_epoch(loader)


def planned_steps(cfg: RunConfig, loader: DataLoader) -> int | None:
    """Total optimizer steps of the run: what the schedule spans. None: a stream of unknown length
    trained by epochs (its schedule cannot span the run; `streams.check_schedule` says so first)."""
    if step_based(cfg, loader):
        return cfg.train.max_steps
    batches = batches_per_epoch(loader)
    by_epochs = math.ceil(batches / cfg.train.accumulate) * cfg.train.epochs if batches and cfg.train.epochs else None
    limits = [s for s in (by_epochs, cfg.train.max_steps) if s is not None]
    return min(limits) if limits else None


def epoch_limit(cfg: RunConfig, loader: DataLoader) -> int | None:
    """Epochs the run may take: none for a stream with max_steps (the run is step-based)."""
    return None if step_based(cfg, loader) else cfg.train.epochs


def train(ctx: LoopContext, state: LoopState) -> LoopState:
    """Run epochs until max epochs/steps, early stop, an interrupt or a failure."""
    cfg = ctx.cfg
    total_steps, epochs = planned_steps(cfg, ctx.train_loader), epoch_limit(cfg, ctx.train_loader)
    batches = batches_per_epoch(ctx.train_loader)
    steps_in_epoch = math.ceil(batches / cfg.train.accumulate) if batches is not None else None  # None: a stream
    log_every, every_n = cfg.log.every_n_steps, cfg.checkpoint.every_n_steps
    running_samples, clock = 0, time.perf_counter()
    # Host seconds spent waiting for batches vs in whole steps, over the open log window:
    # timestamps only, no device sync (the step already reads its loss from the device).
    data_wait, step_time, window_steps = 0.0, 0.0, 0
    state.planned_steps = total_steps  # a resume that changes the run's length re-spans the decay from here
    while not finished(state, total_steps=total_steps, epochs=epochs):
        epoch, first_step = state.epoch, state.step
        start_epoch(ctx.train_loader, epoch=epoch, start=state.samples_in_epoch, seed=cfg.train.seed,
                    rank=ctx.dist.rank if ctx.dist else 0)
        ctx.model.train()
        batches = iter(ctx.train_loader)
        ctx.progress.start_epoch(epoch, epochs=epochs, total_steps=steps_in_epoch)
        exhausted = False
        while not reached(state.step, total_steps) and not ctx.stop_requested:
            fetch_start = time.perf_counter()
            window, observing = next_window(batches, cfg.train.accumulate, ctx.device, float64_to=ctx.float64_to,  # 1.
                                            observe=ctx.observed.add if ctx.observed and epoch == 0 else None)
            fetch_start, fetched = fetch_start + observing, time.perf_counter()  # noting facts is neither wait nor work
            if ctx.dist is not None and is_stream(ctx.train_loader):  # ranks may run out apart
                window = agree_window(ctx.dist, ctx, window)
            if not window:
                exhausted = True
                break
            if ctx.scheduler is None:
                lr = set_lr(ctx.optimizer,
                            factor=lr_factor(cfg.schedule, step=state.step, total_steps=total_steps,
                                             respan=state.schedule_from))
            else:
                lr = ctx.optimizer.param_groups[0]["lr"]
            stats_every = cfg.log.grad_stats_every
            layer_stats: dict[str, Any] | None = {} if stats_every and (state.step + 1) % stats_every == 0 else None
            while True:
                try:  # 2-8. forward .. step
                    loss, grad_norm, window_samples = train_step(ctx, window, step=state.step,
                                                                 splits=state.micro_splits, grad_stats=layer_stats)
                    break
                except torch.OutOfMemoryError:  # retry the same samples in smaller pieces
                    shrink_after_oom(ctx, state, window)
            if ctx.scheduler is not None and not steps_on_metric(ctx.scheduler):
                ctx.scheduler.step()  # per optimizer step, after it
            if loss is None:  # a non-finite step was skipped (train.on_nonfinite=skip)
                skipped_step(ctx, state)
            else:
                state.log_loss_sum += loss
                state.log_loss_count += 1
                state.epoch_loss_sum += loss
                state.epoch_loss_count += 1
            state.step += 1
            state.samples_in_epoch += window_samples
            state.samples_total += window_samples
            running_samples += window_samples
            data_wait += fetched - fetch_start
            step_time += time.perf_counter() - fetch_start
            window_steps += 1

            if state.step % log_every == 0:  # 9. log
                now = time.perf_counter()
                mean_loss = state.log_loss_sum / state.log_loss_count if state.log_loss_count else math.nan
                speed = running_samples / max(now - clock, 1e-9)
                ctx.run.log_metrics({"step": state.step, "epoch": epoch, "split": "train",
                                     "loss": mean_loss, "lr": lr, "grad_norm": grad_norm,
                                     "samples_per_second": round(speed, 1),
                                     "data_wait": round(data_wait / window_steps, 6),
                                     "step_time": round(step_time / window_steps, 6)})
                # a stream has no steps per epoch: count this epoch's steps since it started
                done = (state.step % steps_in_epoch or steps_in_epoch) if steps_in_epoch else state.step - first_step
                ctx.progress.update(steps=done, loss=mean_loss, lr=lr, samples_per_second=speed)
                state.log_loss_sum, state.log_loss_count = 0.0, 0
                running_samples, clock = 0, now
                data_wait, step_time, window_steps = 0.0, 0.0, 0
            if layer_stats:  # per-layer gradient norms, update/weight ratios, dead units
                ctx.run.log_metrics({"step": state.step, "epoch": epoch, "split": "grad_stats", "layers": layer_stats})
            if cfg.train.eval_every and state.step % cfg.train.eval_every == 0:  # 10. validate
                if validate_and_checkpoint(ctx, state, epoch=epoch):
                    return state
            if ctx.checkpoints and every_n and state.step % every_n == 0:  # 11. checkpoint
                ctx.checkpoints.save_last(ctx, state)
        # A stream's epoch ends only when it runs out; a dataset's when its samples are used.
        epoch_done = exhausted or (not is_stream(ctx.train_loader)
                                   and state.samples_in_epoch >= len(ctx.train_loader.dataset))
        if ctx.stop_requested and not epoch_done:  # stopped mid-epoch: no epoch-end work
            return interrupted(ctx, state)
        if epoch_done:
            if ctx.observed is not None:  # the first epoch's data facts (a custom Dataset) into facts.json
                ctx.observed.write(ctx.run)
            state.epoch += 1  # a checkpoint from here starts the next epoch
            state.samples_in_epoch = 0
        train_loss = state.epoch_loss_sum / state.epoch_loss_count if state.epoch_loss_count else math.nan
        state.epoch_loss_sum, state.epoch_loss_count = 0.0, 0
        ctx.run.log_metrics({"step": state.step, "epoch": epoch, "split": "train_epoch", "loss": train_loss})
        if validate_and_checkpoint(ctx, state, epoch=epoch, train_loss=train_loss):  # 10-12.
            return state
        if ctx.stop_requested:
            return interrupted(ctx, state)
    state.status = "completed"
    return state


def skipped_step(ctx: LoopContext, state: LoopState) -> None:
    state.nonfinite_skips += 1
    ctx.run.log_event("nonfinite_skip", step=state.step, skips=state.nonfinite_skips)
    if state.nonfinite_skips >= ctx.cfg.train.max_nonfinite_skips:
        raise RunFailed(f"{state.nonfinite_skips} steps had a non-finite loss or gradient",
                        hint="lower optim.lr, enable clipping, or check the data for NaN")


def finished(state: LoopState, *, total_steps: int | None, epochs: int | None) -> bool:
    return reached(state.step, total_steps) or (epochs is not None and state.epoch >= epochs)


def reached(step: int, total_steps: int | None) -> bool:
    return total_steps is not None and step >= total_steps


def next_window(batches: Iterator, accumulate: int, device: torch.device, *,
                float64_to: torch.dtype | None = None,
                observe: Callable[[Any], None] | None = None) -> tuple[list[Batch], float]:
    """Up to ``accumulate`` micro-batches, moved to the device (fewer at the end of an epoch), and
    the seconds ``observe`` took: it sees each on the host first (train/observed.py)."""
    window, observing = [], 0.0
    for _ in range(accumulate):
        batch = next(batches, None)
        if batch is None:
            break
        if observe is not None:
            began = time.perf_counter()
            observe(batch)
            observing += time.perf_counter() - began
        window.append(to_device(batch, device, float64_to=float64_to))
    return window, observing


def train_step(ctx: LoopContext, window: list[Batch], *, step: int, splits: int = 1,
               grad_stats: dict[str, Any] | None = None) -> tuple[float | None, float, int]:
    """One optimizer step over a window of micro-batches; returns (loss, grad norm, samples).

    With ``grad_stats`` (a dict, every log.grad_stats_every steps) it is filled with per-layer
    statistics (train/grad_stats.py): one more device read on those steps only.

    Each micro-batch runs in ``splits`` pieces (more than 1 after an out-of-memory retry). The
    loss is None when the step was skipped as not finite (train.on_nonfinite=skip).
    """
    cfg, model, optimizer, scaler = ctx.cfg, ctx.forward, ctx.optimizer, ctx.scaler
    sizes = [count_samples(batch) for batch in window]  # sequences, not tokens
    window_samples = sum(sizes)
    world = ctx.dist.world if ctx.dist else 1
    step_total = step_samples(ctx.dist, window_samples, ctx.device)  # all ranks' samples (torchrun)
    pieces = window if splits == 1 else split_pieces(
        window, batch_size=ctx.train_loader.batch_size or max(sizes), splits=splits)
    micro_losses = []
    for index, piece in enumerate(pieces):
        inputs, target = split_batch(piece)
        # DDP: gradients are all-reduced only after the window's last micro-batch.
        with grad_sync(ctx.dist, model, last=index == len(pieces) - 1):
            with ctx.precision.autocast():  # 2. forward under autocast
                output = call_model(model, inputs)
                loss = ctx.task.loss(output, target)
                if len(pieces) > 1 or world > 1:
                    # 3. weight by this micro-batch's share of the step's samples (times the ranks DDP
                    # averages over), so that accumulate=4 x batch 8 equals batch 32, 2 processes at 16
                    # equal one at 32, and a short last window is not over-weighted.
                    loss = loss * (count_samples(piece) * world / step_total)
            scaler.scale(loss).backward()  # 4. backward (scaled only under fp16)
        micro_losses.append(loss.detach().float())
    scaler.unscale_(optimizer)  # 5. unscale before clipping, or the threshold means nothing
    grads = local_tensors([p.grad for p in ctx.params if p.grad is not None])  # FSDP: this rank's shards
    # 6-7. One read from the device per step gives the loss, the gradient norm, the finite
    # check and the clipping decision (logging then reads nothing more). Under fp16 the scaler
    # owns inf/NaN gradients: it skips the step and lowers the scale.
    norms = torch._foreach_norm(grads)  # what clip_grad_norm_ computes first, one kernel per grad
    if ctx.dist is not None:  # the same loss, norm and stop decision on every rank
        loss_value, norm_value = reduce_step(ctx.dist, ctx, loss_sum=torch.stack(micro_losses).sum(), norms=norms)
    else:
        values = torch.stack([*micro_losses, *(n.float() for n in norms)]).tolist()
        loss_value = sum(values[:len(micro_losses)])
        norm_value = math.sqrt(sum(n * n for n in values[len(micro_losses):]))
    finite = math.isfinite(loss_value) and (scaler.is_enabled() or math.isfinite(norm_value))
    if not finite:
        optimizer.zero_grad(set_to_none=True)
        if cfg.train.on_nonfinite == "fail":
            raise NonFiniteStep(window, step=step, loss=loss_value, grad_norm=norm_value)
        scaler.update()  # closes this step's unscale_, or the next step's unscale_ refuses to run
        return None, norm_value, step_total
    max_norm = cfg.train.clip_grad_norm
    sharded = ctx.dist is not None and ctx.dist.kind == "fsdp"
    if sharded and max_norm and math.isfinite(norm_value) and norm_value + 1e-6 > max_norm:
        clip_shards(grads, max_norm=max_norm, total_norm=norm_value)
    elif max_norm and math.isfinite(norm_value) and norm_value + 1e-6 > max_norm:
        # clip_grad_norm_'s own arithmetic (its float32 total norm), only when it would clip
        total = torch.linalg.vector_norm(torch.stack(norms))
        torch.nn.utils.clip_grads_with_norm_(ctx.params, max_norm, total, foreach=True)
    if grad_stats is not None and ctx.dist is not None and ctx.dist.kind == "fsdp":
        grad_stats = None  # per-layer statistics read whole tensors; FSDP holds shards (not collected)
    if grad_stats is not None:
        with_grad = [p for p in ctx.params if p.grad is not None]  # the order of `norms`
        weights_before = before_step(with_grad)
    scaler.step(optimizer)  # 8. step, then let the scaler adapt
    scaler.update()
    if grad_stats is not None:
        grad_norms = torch.stack(norms).tolist() if ctx.dist else values[len(micro_losses):]
        grad_stats.update(after_step(names=layer_names(ctx.model, with_grad), params=with_grad,
                                     grad_norms=grad_norms, before=weights_before))
    optimizer.zero_grad(set_to_none=True)
    return loss_value, norm_value, step_total


class NonFiniteStep(RunFailed):
    """The loss or gradient norm of a step was NaN or inf; carries the batch for diagnosis."""

    def __init__(self, window: list[Batch], *, step: int, loss: float, grad_norm: float) -> None:
        super().__init__(f"non-finite training step: loss={loss}, grad norm={grad_norm}",
                         hint="lower optim.lr, keep train.clip_grad_norm on, check inputs for NaN; "
                              "train.on_nonfinite=skip skips such steps")
        self.window = window
        self.step = step
        self.loss = loss
        self.grad_norm = grad_norm


@torch.inference_mode()
def evaluate(ctx: LoopContext) -> dict[str, float]:
    """Mean loss (over samples) and metrics over the validation set, under eval() and inference_mode()."""
    assert ctx.val_loader is not None
    # Under DDP each rank evaluates its shard on the plain module (DDP's forward would sync buffers);
    # under FSDP every rank evaluates the whole set on the sharded module.
    module = ctx.model if ctx.dist is not None and ctx.dist.kind == "ddp" else ctx.forward
    module.eval()
    metrics = ctx.task.metrics
    for metric in metrics.values():
        metric.reset()
    loss_sum = torch.zeros((), device=ctx.device)
    count = 0
    for batch in ctx.val_loader:
        batch = to_device(batch, ctx.device, float64_to=ctx.float64_to)
        inputs, target = split_batch(batch)
        samples = count_samples(batch)
        with ctx.precision.autocast():
            output = call_model(module, inputs)
            if ctx.val_loss_in_train_mode:  # a detection model: losses only in train mode, nothing updated
                with unchanged(module, training=True):
                    loss_sum += ctx.task.loss(call_model(module, inputs), target).float() * samples
            else:
                loss_sum += ctx.task.loss(output, target).float() * samples
        logits = output_logits(output)
        for metric in metrics.values():
            metric.update(logits, target)
        count += samples
    module.train()
    if ctx.dist is not None:  # the whole validation set: every rank's shard, nothing counted twice
        loss_sum, count = reduce_eval(ctx.dist, loss_sum=loss_sum, count=count, metrics=metrics)
    results = [torch.as_tensor(metric.compute(), device=ctx.device).float().reshape(()) for metric in metrics.values()]
    values = torch.stack([loss_sum, *results]).tolist()  # one sync
    names = ("loss", *metrics)
    return {f"val_{name}": value / max(count, 1) if name == "loss" else value
            for name, value in zip(names, values, strict=True)}


def validate_and_checkpoint(ctx: LoopContext, state: LoopState, *, epoch: int,
                            train_loss: float | None = None) -> bool:
    """10-12. validate, checkpoint best (and last at an epoch's end), early-stop. True: stop the run.

    ``train_loss`` is given at the end of an epoch and absent for mid-epoch (eval_every) checks.
    """
    cfg = ctx.cfg
    epoch_end = train_loss is not None
    metrics: dict[str, float] = {"train_loss": train_loss} if epoch_end else {}
    # eval_every can land on an epoch's last step: evaluate once, and count it once.
    fresh = state.last_eval_step != state.step
    if ctx.val_loader is not None and fresh:
        with validation_collectives(ctx.dist):  # FSDP's forwards gather: a hung rank names this one
            val_metrics = evaluate(ctx)
        state.last_eval_step = state.step
        ctx.run.log_metrics({"step": state.step, "epoch": epoch, "split": "val",
                             **{k.removeprefix("val_"): v for k, v in val_metrics.items()}})
    else:
        val_metrics = {k: v for k, v in ctx.last_metrics.items() if k.startswith("val_")}
    metrics.update(val_metrics)
    ctx.last_metrics = metrics
    monitored = metrics.get(cfg.train.monitor)
    is_best = False
    if monitored is not None and math.isfinite(monitored) and (fresh or cfg.train.monitor == "train_loss"):
        is_best = ctx.early_stop.update(monitored, epoch=epoch, step=state.step)
        if steps_on_metric(ctx.scheduler):
            ctx.scheduler.step(monitored)  # ReduceLROnPlateau: on the monitored metric, once per evaluation
    if epoch_end:
        ctx.progress.end_epoch({**metrics, "lr": ctx.optimizer.param_groups[0]["lr"]})
    stop = cfg.early_stop.enabled and ctx.early_stop.should_stop
    if stop:
        state.status = "early_stopped"
        state.reason = (f"{cfg.train.monitor} did not improve by more than {cfg.early_stop.min_delta} "
                        f"for {cfg.early_stop.patience} evaluations")
        ctx.run.log_event("early_stop", step=state.step, epoch=epoch, reason=state.reason,
                          best=ctx.early_stop.best)
    elif ctx.on_evaluation is not None and monitored is not None and fresh and math.isfinite(monitored) \
            and ctx.on_evaluation(state, monitored):
        stop = True
        state.status = "pruned"
        state.reason = f"pruned at epoch {epoch + 1}: {cfg.train.monitor}={monitored:.4g} trails the other trials"
        ctx.run.log_event("pruned", step=state.step, epoch=epoch, reason=state.reason, value=monitored)
    if ctx.checkpoints:
        if epoch_end or stop:
            ctx.checkpoints.save_last(ctx, state, sign=not is_best)
        if is_best:
            ctx.checkpoints.save_best(ctx, state)
    return stop


def interrupted(ctx: LoopContext, state: LoopState) -> LoopState:
    """A signal asked to stop: the current step is done; write `last` and say so."""
    state.status = "interrupted"
    state.reason = f"stopped by {ctx.stop_requested[0]}"
    if ctx.checkpoints:
        ctx.checkpoints.save_last(ctx, state)
    ctx.run.log_event("interrupted", step=state.step, epoch=state.epoch, signal=ctx.stop_requested[0])
    return state
