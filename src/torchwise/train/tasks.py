"""Tasks: the loss and the validation metrics for classification and regression."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from torchwise.config import TaskConfig
from torchwise.errors import ModelError
from torchwise.targets import resolve_factory

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Task:
    """What to minimise and what to report; metrics are summed per batch and divided at the end."""

    kind: str
    loss: LossFn
    metric_names: tuple[str, ...]

    def metric_sums(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Per-batch sums of each metric, as one tensor (kept on the device: no sync)."""
        if self.kind == "classification":
            return (output.argmax(dim=-1) == target).sum().float().unsqueeze(0)
        errors = (output.float() - target.float()).abs()
        per_sample = errors.flatten(1).mean(1) if errors.dim() > 1 else errors  # MAE of each sample
        return per_sample.sum().unsqueeze(0)


def build_task(cfg: TaskConfig, *, base_dir: Path | None = None) -> Task:
    if cfg.loss:
        loss_obj = resolve_factory(cfg.loss, search_dir=base_dir, makes=(nn.Module,), what="a loss module",
                                   instances=True)
        loss = loss_obj() if isinstance(loss_obj, type) and issubclass(loss_obj, nn.Module) else loss_obj
    else:
        loss = F.cross_entropy if cfg.type == "classification" else F.mse_loss
    names = ("accuracy",) if cfg.type == "classification" else ("mae",)
    return Task(kind=cfg.type, loss=loss, metric_names=names)


def check_output_shape(task: Task, output: torch.Tensor, target: torch.Tensor, *,
                       num_classes: int | None, head_name: str | None) -> None:
    """Name both shapes, and the layer to change, when the model's output cannot meet the targets."""
    layer = f"the last layer ({head_name})" if head_name else "the model's last layer"
    if task.kind == "classification":
        if output.dim() != 2 or (num_classes is not None and output.shape[1] != num_classes):
            want = f"[batch, {num_classes}]" if num_classes else "[batch, num_classes]"
            raise ModelError(
                f"model output has shape {list(output.shape)} but classification targets of shape "
                f"{list(target.shape)} need {want}",
                hint=f"make {layer} output {num_classes or 'num_classes'} features")
    elif output.shape != target.shape:
        raise ModelError(
            f"model output has shape {list(output.shape)} but the regression targets have shape "
            f"{list(target.shape)}",
            hint=f"make {layer} output {list(target.shape[1:]) or 'a scalar'} per sample "
                 "(an MSE between these shapes would broadcast silently)")


def last_linear_name(model: nn.Module) -> str | None:
    name = None
    for module_name, module in model.named_modules():
        if isinstance(module, (nn.Linear, nn.LazyLinear)):
            name = module_name
    return name
