"""Checks on the first training and validation batch, and naming the module that produced a non-finite value.

Both run the model with hooks that say which module was running, so an error names a layer
instead of pointing into torch's internals.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from torchwise.data.batch import (
    call_model,
    describe,
    is_loss_dict,
    output_logits,
    output_loss,
    split_batch,
    tensors,
    to_device,
)
from torchwise.data.prepare import PreparedData, first_batch
from torchwise.errors import DataError, ModelError, RunFailed, TorchwiseError
from torchwise.train.model_mode import unchanged
from torchwise.train.precision import Precision
from torchwise.train.tasks import Task, check_output_shape, last_linear_name

if TYPE_CHECKING:
    from torchwise.train.context import LoopContext
    from torchwise.train.loop import NonFiniteStep


@dataclass
class Preflight:
    """What the checks found that the run must act on."""

    float64_to: torch.dtype | None = None  # inputs arrive as float64: cast them to the model's dtype
    dropped_metrics: list[str] = field(default_factory=list)  # built-in metrics this output cannot feed
    loss_dict: dict[str, Any] | None = None  # the model returns a dict of losses: which ones, and what trains
    val_loss_in_train_mode: bool = False  # eval mode gives no loss (detections): validate the loss in train mode
    model_loss: bool = False  # the model returned its own loss on the training batch (facts.json says so)


def preflight(model: nn.Module, task: Task, data: PreparedData, loaders: dict[str, DataLoader | None], *,
              device: torch.device, precision: Precision) -> Preflight:
    """One batch of each loader (``{"training": ..., "validation": ...}``) through collation, the
    device move, the model, the loss and every metric, so that shape, device, dtype and structure
    mistakes fail before any work is lost. The training batch runs in train mode and the
    validation batch in eval mode, as the loop runs them (a detection model returns losses in one
    and detections in the other); the model's mode, buffers and the RNG are put back exactly."""
    found = Preflight()
    for split, loader in loaders.items():
        if loader is None:
            continue
        batch = first_batch(loader.dataset, loader.collate_fn, split=split)
        found.float64_to = found.float64_to or float64_cast(model, batch)
        check_batch(model, task, data, to_device(batch, device, float64_to=found.float64_to), split=split,
                    precision=precision, found=found)
    for name in found.dropped_metrics:
        task.metrics.pop(name, None)
    return found


def float64_cast(model: nn.Module, batch: Any) -> torch.dtype | None:
    """The model's dtype when the batch holds float64 tensors (numpy's default) and the model does not."""
    dtype = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    if dtype != torch.float64 and any(t.dtype == torch.float64 for t in tensors(batch)):
        return dtype
    return None


def check_batch(model: nn.Module, task: Task, data: PreparedData, batch: Any, *, split: str,
                precision: Precision, found: Preflight) -> None:
    inputs, target = split_batch(batch)
    check_call(model, inputs, split=split)
    training = split == "training"
    try:
        with unchanged(model, training=training), precision.autocast(), innermost_module(model) as where:
            output = call_model(model, inputs)
    except torch.OutOfMemoryError:
        return  # the batch does not fit: the loop retries it in smaller pieces, and says so if none fits
    except RuntimeError as err:
        raise ModelError(f"the model failed on its first {split} batch in {where.name or 'the model'} "
                         f"(inputs {describe(inputs)}): {err}".strip(),
                         hint=_forward_hint(str(err))) from None
    if training:
        found.model_loss = output_loss(output) is not None
    if training and is_loss_dict(output):  # the run's events say which loss trains it
        found.loss_dict = {"source": "your loss" if task.user_loss else "the sum of the model's losses",
                           "losses": sorted(output)}
        check_loss(task, output, target, split=split, precision=precision)
        return  # metrics see eval-mode outputs (detections), checked on the validation batch
    if not training and found.loss_dict is not None and output_loss(output) is None:
        # A detection model gives detections in eval mode: its validation loss comes from a
        # train-mode forward (no update, state restored); the metrics see the detections.
        found.val_loss_in_train_mode = True
        with unchanged(model, training=True), precision.autocast():
            losses = call_model(model, inputs)
        check_loss(task, losses, target, split=split, precision=precision)
        for name, metric in task.metrics.items():
            check_metric(name, metric, output, target, split=split, user=name in task.user_metrics, found=found)
        return
    logits = output_logits(output)
    if task.picks_loss(output):
        if not isinstance(logits, torch.Tensor):
            raise ModelError(f"the model returned {describe(output)}: no tensor, no `loss` and no `logits`",
                             hint="return the logits tensor, or an object/dict with `logits` (and `loss` to "
                                  "compute the loss yourself)")
        if isinstance(target, torch.Tensor):
            check_output_shape(task, logits, target, num_classes=data.num_classes,
                               head_name=last_linear_name(model))
    check_loss(task, output, target, split=split, precision=precision)
    for name, metric in task.metrics.items():
        check_metric(name, metric, logits, target, split=split, user=name in task.user_metrics, found=found)


def check_loss(task: Task, output: Any, target: Any, *, split: str, precision: Precision) -> None:
    """The loss of the output must be computable and one number."""
    try:
        with torch.inference_mode(), precision.autocast():
            loss = task.loss(output, target)
    except (RuntimeError, ValueError, TypeError, IndexError) as err:
        whose = "your loss" if task.user_loss else f"the {task.kind} loss"
        raise DataError(f"{whose} cannot take the model's output {describe(output_logits(output))} and the "
                        f"{split} batch's target {describe(target)}: {str(err).splitlines()[0]}",
                        hint="classification wants integer class labels (torch.long); multilabel and regression "
                             "want float targets shaped like the output") from None
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise ModelError(f"the loss must be one number; it is {describe(loss)}",
                         hint="reduce it over the batch (reduction='mean', or .mean())")


def check_call(model: nn.Module, inputs: Any, *, split: str) -> None:
    """The inputs must bind to forward()'s parameters under the calling convention."""
    import inspect

    try:
        signature = inspect.signature(model.forward)
    except (TypeError, ValueError):  # a builtin or C-implemented forward: let the call tell
        return
    try:
        if isinstance(inputs, Mapping):
            signature.bind(**inputs)
        elif isinstance(inputs, (tuple, list)):
            signature.bind(*inputs)
        else:
            signature.bind(inputs)
    except TypeError as err:
        if isinstance(inputs, Mapping):
            how = (f"a dict batch calls model(**batch): forward{signature} must take the keys "
                   f"{sorted(inputs)}; or return (inputs, target) samples so that only the inputs reach it")
        elif isinstance(inputs, (tuple, list)):
            how = f"a tuple of inputs calls model(*inputs): forward{signature} must take {len(inputs)} arguments"
        else:
            how = f"a tensor input calls model(inputs): forward{signature} must take one argument"
        raise ModelError(f"the model cannot be called with the {split} batch's inputs {describe(inputs)}: {err}",
                         hint=how) from None


def check_metric(name: str, metric: Any, logits: Any, target: Any, *, split: str, user: bool,
                 found: Preflight) -> None:
    """A metric must take (logits, target); a built-in one that cannot (the model computes its own
    loss on another layout) is dropped, with an event, instead of failing the run."""
    try:
        with torch.inference_mode():
            metric.update(logits, target)
            metric.compute()
    except Exception as err:  # a metric is user code: any failure here is a setup error
        if not user:
            found.dropped_metrics.append(name)
            return
        raise DataError(f"metric {name!r} fails on the {split} batch (logits {describe(logits)}, target "
                        f"{describe(target)}): {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}",
                        hint="a metric gets (logits, target) of one batch: a torchmetrics.Metric, or "
                             "fn(output, target) returning the batch's mean") from None
    finally:
        metric.reset()


def _forward_hint(message: str) -> str:
    if "same device" in message or "expected device" in message:
        return ("a tensor made inside forward() is on another device than the input: create it with "
                "device=x.device (or register it as a buffer) so model.to(device) moves it")
    if "mat1 and mat2" in message:
        return "a Linear layer's in_features does not match its input: flatten with x.flatten(1) or fix in_features"
    return "run `torchwise explain` on the message above for the likely cause"


@dataclass
class _Where:
    name: str | None = None


@contextlib.contextmanager
def innermost_module(model: nn.Module) -> Iterator[_Where]:
    """Track the innermost module being run, to name it when forward() raises."""
    where, stack = _Where(), []
    names = {module: name for name, module in model.named_modules()}

    def enter(module: nn.Module, _: Any) -> None:
        stack.append(names.get(module))
        where.name = stack[-1]

    def leave(module: nn.Module, _: Any, __: Any) -> None:
        stack.pop()

    handles = [m.register_forward_pre_hook(enter) for m in model.modules()]
    handles += [m.register_forward_hook(leave) for m in model.modules()]
    try:
        yield where
    finally:
        for handle in handles:
            handle.remove()


def name_nonfinite(ctx: LoopContext | None, err: NonFiniteStep) -> TorchwiseError:
    """Re-run the offending batch with forward hooks and name the first module whose output
    is not finite; a finite forward means the backward overflowed."""
    if ctx is None:
        return err
    module, step = first_nonfinite_module(ctx.model, err.window, precision=ctx.precision), err.step
    # Every forward output finite: a non-finite loss was made by the loss computation itself, a finite
    # one means the gradient overflowed in the backward pass.
    where = (f"module '{module}'" if module else
             "no module's forward output (the loss computation made it)" if not math.isfinite(err.loss) else
             "no module's forward output (the gradient overflowed)")
    # Whether the batch itself held NaN/inf: then the data, not the step size, is the cause.
    inputs = [t for batch in err.window for t in tensors(split_batch(batch)[0]) if t.is_floating_point()]
    inputs_finite = all(bool(torch.isfinite(t).all()) for t in inputs)
    ctx.run.log_event("nonfinite", step=step, module=module, loss=err.loss, grad_norm=err.grad_norm,
                      inputs_finite=inputs_finite)
    return RunFailed(f"non-finite loss or gradient at step {step}: first non-finite output in {where}",
                     hint=err.hint)


def first_nonfinite_module(model: nn.Module, window: list, *, precision: Precision) -> str | None:
    found: list[str] = []
    names = {module: name for name, module in model.named_modules()}

    def check(module: nn.Module, _: Any, output: Any) -> None:
        if not found and any(t.is_floating_point() and not torch.isfinite(t).all() for t in tensors(output)):
            found.append(names.get(module) or type(module).__name__)

    handles = [m.register_forward_hook(check) for m in model.modules()]
    try:
        with torch.no_grad(), precision.autocast():
            for batch in window:
                call_model(model, split_batch(batch)[0])
                if found:
                    break
    finally:
        for handle in handles:
            handle.remove()
    return found[0] if found else None
