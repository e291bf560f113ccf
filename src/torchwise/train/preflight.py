"""Checks on the first batch, and naming the module that produced a non-finite value.

Both run the model with hooks that say which module was running, so an error names a layer
instead of pointing into torch's internals.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.utils.data import Dataset

from torchwise.data.prepare import PreparedData, first_batch
from torchwise.errors import DataError, ModelError, RunFailed, TorchwiseError
from torchwise.train.precision import Precision
from torchwise.train.tasks import Task, check_output_shape, last_linear_name

if TYPE_CHECKING:
    from torchwise.train.context import LoopContext
    from torchwise.train.loop import NonFiniteStep


def preflight(model: nn.Module, task: Task, data: PreparedData, dataset: Dataset,
              collate_fn: Callable[[list[Any]], Any], *, device: torch.device, precision: Precision) -> None:
    """Run two samples through the model and the loss (eval mode: no BN update, no dropout RNG),
    so shape, device and dtype mistakes fail with a clear message before training starts."""
    from torchwise.train.loop import to_device

    x, y = to_device(first_batch(dataset, collate_fn), device)
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode(), precision.autocast(), innermost_module(model) as where:
            output = model(x)
    except RuntimeError as err:
        raise ModelError(f"the model failed on its first batch in {where.name or 'the model'} "
                         f"(input {list(x.shape)}): {err}".strip(),
                         hint=_forward_hint(str(err))) from None
    finally:
        model.train(was_training)
    check_output_shape(task, output, y, num_classes=data.num_classes, head_name=last_linear_name(model))
    try:
        with torch.inference_mode(), precision.autocast():
            task.loss(output, y)
    except (RuntimeError, ValueError, TypeError) as err:
        raise DataError(f"the loss cannot take this model's output {list(output.shape)} {output.dtype} and "
                        f"targets {list(y.shape)} {y.dtype}: {err}",
                        hint="classification wants integer class labels (torch.long); regression wants float "
                             "targets shaped like the output") from None


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
    where = f"module '{module}'" if module else "no module's forward output (the gradient overflowed)"
    ctx.run.log_event("nonfinite", step=step, module=module, loss=err.loss, grad_norm=err.grad_norm)
    return RunFailed(f"non-finite loss or gradient at step {step}: first non-finite output in {where}",
                     hint=err.hint)


def first_nonfinite_module(model: nn.Module, window: list, *, precision: Precision) -> str | None:
    found: list[str] = []
    names = {module: name for name, module in model.named_modules()}

    def check(module: nn.Module, _: Any, output: Any) -> None:
        tensors = [output] if isinstance(output, torch.Tensor) else [
            t for t in (output if isinstance(output, (tuple, list)) else ()) if isinstance(t, torch.Tensor)]
        if not found and any(t.is_floating_point() and not torch.isfinite(t).all() for t in tensors):
            found.append(names.get(module) or type(module).__name__)

    handles = [m.register_forward_hook(check) for m in model.modules()]
    try:
        with torch.no_grad(), precision.autocast():
            for x, _ in window:
                model(x)
                if found:
                    break
    finally:
        for handle in handles:
            handle.remove()
    return found[0] if found else None
