"""Tasks: what to minimise and what to report, for classification, multi-label and regression.

Where the loss comes from, in order: the loss you give (``fit(loss=...)`` or ``task.loss``), which
sees the model's output as it is; else the model's own ``loss`` (attribute or key); else the
task's loss on the logits. The output/target shape check applies only to the task's own loss.

>>> import torch
>>> from torchwise.config import TaskConfig
>>> task = build_task(TaskConfig(type="classification"))
>>> logits, target = torch.zeros(2, 7, 5), torch.tensor([[1, 2, -100, 0, 0, 0, 0]] * 2)  # [B, T, C] vs [B, T]
>>> round(float(task.loss(logits, target)), 4)  # ln 5: uniform logits, the ignored token skipped
1.6094
>>> float(task.loss({"loss": torch.tensor(0.25), "logits": logits}, target))  # the model's own loss
0.25
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from torchwise.config import TaskConfig
from torchwise.data.batch import output_logits, output_loss
from torchwise.errors import DataError, ModelError
from torchwise.targets import build_object
from torchwise.train.metrics import Metric, as_metric, builtin_metrics, class_dim

LossFn = Callable[[Any, Any], torch.Tensor]


@dataclass
class Task:
    """The loss of a batch and the metrics an evaluation reports."""

    kind: str
    loss_fn: LossFn
    metrics: dict[str, Metric] = field(default_factory=dict)
    user_loss: bool = False  # the loss is the user's: it sees the raw output, and no shape check applies
    user_metrics: frozenset[str] = frozenset()  # the metrics the user asked for (the others are built-in)

    @property
    def metric_names(self) -> tuple[str, ...]:
        return tuple(self.metrics)

    def loss(self, output: Any, target: Any) -> torch.Tensor:
        """The batch's loss: the user's, else the model's own, else the task's on the logits."""
        if not self.user_loss:
            own = output_loss(output)
            if own is not None:
                return own
            output = output_logits(output)
        if target is None and not self.user_loss:  # your loss may need none (a model that returns its losses)
            raise DataError("this batch has no target and the model returned no `loss`",
                            hint="return (inputs, target) samples, put the target under the key 'labels', "
                                 "or make forward() return an output with a `loss`")
        return self.loss_fn(output, target)

    def picks_loss(self, output: Any) -> bool:
        """True when the task's own loss is used for this output (so its shape rules apply)."""
        return not self.user_loss and output_loss(output) is None

    def to(self, device: torch.device) -> Task:
        """Move a loss module (class weights) and stateful metrics (torchmetrics) to the device."""
        for obj in (self.loss_fn, *self.metrics.values()):
            if isinstance(obj, nn.Module):
                obj.to(device)
        return self


def cross_entropy(*, ignore_index: int = -100, weight: torch.Tensor | None = None) -> LossFn:
    """Cross-entropy for logits [B, C], [B, C, d1, ...] (segmentation) or [B, T, C] (sequences)."""

    def loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        class_weight = weight.to(logits.device) if weight is not None else None
        if logits.dim() > 2 and class_dim(logits, target) == -1:
            logits, target = logits.flatten(0, -2), target.flatten()  # channels-last: classes last
        return F.cross_entropy(logits, target, weight=class_weight, ignore_index=ignore_index)

    return loss


def multilabel_bce(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """BCE-with-logits against 0/1 targets (any dtype: they are compared as floats)."""
    return F.binary_cross_entropy_with_logits(logits, target.to(logits.dtype))


def regression_mse(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.mse_loss(output, target if target.is_floating_point() else target.float())


def build_task(cfg: TaskConfig, *, base_dir: Path | None = None, loss: LossFn | None = None,
               metrics: dict[str, Any] | None = None) -> Task:
    """The task the config describes; ``loss`` and ``metrics`` (Python objects from fit()) take
    the place of the config's ``task.loss`` and ``task.metrics``."""
    if loss is None and cfg.loss is not None:
        loss = build_object(cfg.loss.target, cfg.loss.kwargs, search_dir=base_dir, makes=(nn.Module,),
                            what="a loss module", instances=True)
    if loss is not None and isinstance(loss, type) and issubclass(loss, nn.Module):
        loss = loss()
    if cfg.type == "classification":
        weight = torch.tensor(cfg.class_weights, dtype=torch.float32) if cfg.class_weights else None
        default = cross_entropy(ignore_index=cfg.ignore_index, weight=weight)
    else:
        default = multilabel_bce if cfg.type == "multilabel" else regression_mse
    chosen: dict[str, Any] = dict(builtin_metrics(cfg.type, ignore_index=cfg.ignore_index))
    if metrics is None:
        metrics = {name: build_object(spec.target, spec.kwargs, search_dir=base_dir, makes=(Metric, nn.Module),
                                      what="a metric", instances=True)
                   for name, spec in cfg.metrics.items()}
    chosen.update({name: as_metric(obj) for name, obj in metrics.items()})
    return Task(kind=cfg.type, loss_fn=loss or default, metrics=chosen, user_loss=loss is not None,
                user_metrics=frozenset(metrics))


def check_output_shape(task: Task, output: torch.Tensor, target: torch.Tensor, *,
                       num_classes: int | None, head_name: str | None) -> None:
    """Name both shapes, and the fix for the layout at hand, when the task's own loss cannot take
    the model's output (a user's loss, or the model's own, is the user's business)."""
    layer = f"the last layer ({head_name})" if head_name else "the model's last layer"
    shapes = f"model output has shape {list(output.shape)} but"
    if task.kind == "classification":
        want = num_classes or "num_classes"
        zeros_and_ones = bool(((target == 0) | (target == 1)).all())
        one_per_class = output.shape == target.shape and output.dim() > 1 and zeros_and_ones
        if output.dim() == target.dim() and not one_per_class:
            raise ModelError(f"{shapes} classification targets of shape {list(target.shape)} need one more "
                             f"dimension on the output: [batch, {want}]",
                             hint=f"make {layer} output {want} features (one logit per class)")
        if one_per_class:
            raise ModelError(f"{shapes} classification targets {list(target.shape)} {target.dtype} hold one value "
                             "per class, not a class index",
                             hint="for 0/1 labels per class set task.type=multilabel; for one class per sample "
                                  "pass class indices (torch.long)")
        try:
            dim = class_dim(output, target)
        except DataError:
            raise ModelError(f"{shapes} classification targets have shape {list(target.shape)}",
                             hint=_layout_hint(output, target, layer, want)) from None
        if num_classes is not None and output.shape[dim] != num_classes:
            where = "dimension 1" if dim == 1 and output.dim() > 2 else "the last dimension"
            raise ModelError(f"{shapes} classification targets of shape {list(target.shape)} need "
                             f"{_want(output, dim, num_classes)} ({num_classes} classes in {where})",
                             hint=f"make {layer} output {num_classes} features")
    elif output.shape != target.shape:
        kind = "multi-label" if task.kind == "multilabel" else "regression"
        raise ModelError(f"{shapes} the {kind} targets have shape {list(target.shape)}",
                         hint=f"make {layer} output {list(target.shape[1:]) or 'a scalar'} per sample "
                              "(a loss between these shapes would broadcast silently)")


def _want(output: torch.Tensor, dim: int, num_classes: int) -> str:
    shape = [str(s) for s in output.shape]
    shape[0] = "batch"
    shape[dim] = str(num_classes)
    return f"[{', '.join(shape)}]"


def _layout_hint(output: torch.Tensor, target: torch.Tensor, layer: str, want: Any) -> str:
    if output.dim() == 2:
        return f"targets [batch] need logits [batch, {want}]; flatten per-position targets, or check the labels"
    if output.dim() != target.dim() + 1:
        return ("logits need exactly one dimension more than the targets: [B, C] for [B], [B, C, H, W] for "
                "[B, H, W], [B, T, C] for [B, T]")
    return (f"segmentation wants logits [B, C, {', '.join(map(str, target.shape[1:]))}] (classes in dimension 1); "
            f"a sequence model wants [B, {', '.join(map(str, target.shape[1:]))}, C] (classes last); "
            f"check {layer} and any reshape after it")


def last_linear_name(model: nn.Module) -> str | None:
    name = None
    for module_name, module in model.named_modules():
        if isinstance(module, (nn.Linear, nn.LazyLinear)):
            name = module_name
    return name
