"""Validation metrics: update per batch on the device, compute once per evaluation.

A metric is anything with ``update(output, target)``, ``compute()`` and ``reset()``: the
built-ins below, a ``torchmetrics.Metric``, or a plain function ``fn(output, target)`` wrapped
in `MeanOverSamples`. Metrics see the model's logits (`data.batch.output_logits`). State stays on
the device, so an evaluation reads the device once, at the end.

>>> import torch
>>> acc = Accuracy()
>>> acc.update(torch.tensor([[2.0, 0.0], [0.0, 1.0], [3.0, 1.0]]), torch.tensor([0, 0, -100]))
>>> float(acc.compute())  # the ignored position counts for nothing
0.5
>>> f1 = MicroF1()
>>> f1.update(torch.tensor([[1.0, -1.0], [1.0, 1.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
>>> round(float(f1.compute()), 4)  # tp=2, fp=1, fn=0: 2*2 / (2*2 + 1 + 0)
0.8
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import torch

from torchwise.data.batch import count_samples
from torchwise.errors import DataError


@runtime_checkable
class Metric(Protocol):
    def update(self, output: Any, target: Any) -> None: ...

    def compute(self) -> Any: ...

    def reset(self) -> None: ...


def class_dim(logits: torch.Tensor, target: torch.Tensor) -> int:
    """Where the classes are: 1 for cross-entropy's [B, C, d1, ...] against [B, d1, ...], -1 for
    channels-last [B, T, C] against [B, T] (a language model's logits).

    >>> class_dim(torch.zeros(2, 5, 4, 4), torch.zeros(2, 4, 4)), class_dim(torch.zeros(2, 7, 5), torch.zeros(2, 7))
    (1, -1)
    """
    if logits.dim() == target.dim() + 1:
        if logits.shape[2:] == target.shape[1:] and logits.shape[0] == target.shape[0]:
            return 1
        if logits.shape[:-1] == target.shape:
            return -1
    raise DataError(f"classification logits {list(logits.shape)} do not fit targets {list(target.shape)}",
                    hint="logits are [B, C] for targets [B], [B, C, d1, ...] for [B, d1, ...] (segmentation), "
                         "or [B, T, C] for [B, T] (sequences)")


class _Counts:
    """Two running sums on the device: a numerator and a denominator."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sums: torch.Tensor | None = None

    def add(self, numerator: torch.Tensor, denominator: torch.Tensor | int) -> None:
        wide = torch.float32 if numerator.device.type == "mps" else torch.float64  # MPS has no float64
        pair = torch.stack([numerator.to(wide), torch.as_tensor(denominator, device=numerator.device).to(wide)])
        self.sums = pair if self.sums is None else self.sums + pair

    def compute(self) -> torch.Tensor:
        if self.sums is None:
            return torch.tensor(float("nan"))
        return self.sums[0] / self.sums[1]


class Accuracy(_Counts):
    """Share of positions whose arg-max class is the target (``ignore_index`` skipped)."""

    def __init__(self, ignore_index: int = -100) -> None:
        super().__init__()
        self.ignore_index = ignore_index

    def update(self, output: torch.Tensor, target: torch.Tensor) -> None:
        predicted = output.argmax(dim=class_dim(output, target))
        counted = target != self.ignore_index
        self.add(((predicted == target) & counted).sum(), counted.sum())


class MeanAbsoluteError(_Counts):
    """Mean over samples of each sample's mean absolute error (any number of outputs)."""

    def update(self, output: torch.Tensor, target: torch.Tensor) -> None:
        errors = (output.float() - target.float()).abs()
        per_sample = errors.flatten(1).mean(1) if errors.dim() > 1 else errors
        self.add(per_sample.sum(), per_sample.numel())


class ExactMatch(_Counts):
    """Multi-label: share of samples whose every label (logit > 0) is right."""

    def update(self, output: torch.Tensor, target: torch.Tensor) -> None:
        right = ((output > 0) == (target > 0.5)).flatten(1).all(1)
        self.add(right.sum(), right.numel())


class MicroF1:
    """Multi-label micro-F1: 2 TP / (2 TP + FP + FN) over every (sample, label) pair."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.counts: torch.Tensor | None = None

    def update(self, output: torch.Tensor, target: torch.Tensor) -> None:
        predicted, actual = output > 0, target > 0.5
        counts = torch.stack([(predicted & actual).sum(), (predicted & ~actual).sum(), (~predicted & actual).sum()])
        self.counts = counts if self.counts is None else self.counts + counts

    def compute(self) -> torch.Tensor:
        if self.counts is None:
            return torch.tensor(float("nan"))
        tp, fp, fn = self.counts.float()
        return 2 * tp / (2 * tp + fp + fn).clamp(min=1)


class MeanOverSamples(_Counts):
    """A plain function ``fn(output, target)`` returning a batch's mean, averaged over samples
    (each batch weighted by its number of samples, so a short last batch counts right)."""

    def __init__(self, fn: Callable[[Any, Any], Any]) -> None:
        super().__init__()
        self.fn = fn

    def update(self, output: Any, target: Any) -> None:
        value = torch.as_tensor(self.fn(output, target))
        if value.numel() != 1:
            raise DataError(f"metric function {getattr(self.fn, '__name__', self.fn)!r} returned a tensor of "
                            f"shape {list(value.shape)}; it must return one number (the batch's mean)",
                            hint="reduce inside the function, e.g. return (pred == target).float().mean()")
        samples = count_samples(target if target is not None else output)
        self.add(value.reshape(()).detach() * samples, samples)


def as_metric(obj: Any) -> Metric:
    """A metric object as it is; a metric class instantiated; a plain function wrapped."""
    if isinstance(obj, type):
        obj = obj()
    if isinstance(obj, Metric):
        return obj
    if callable(obj):
        return MeanOverSamples(obj)
    raise DataError(f"{obj!r} is not a metric",
                    hint="pass a torchmetrics.Metric, or a function fn(output, target) -> number")


def builtin_metrics(kind: str, *, ignore_index: int = -100) -> dict[str, Metric]:
    """The metrics each task reports by default."""
    if kind == "classification":
        return {"accuracy": Accuracy(ignore_index)}
    if kind == "multilabel":
        return {"exact_match": ExactMatch(), "f1": MicroF1()}
    return {"mae": MeanAbsoluteError()}
