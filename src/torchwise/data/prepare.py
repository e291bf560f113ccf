"""From the data config to train/validation datasets that are checked against the task."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import Dataset, TensorDataset, default_collate

from torchwise.config import RunConfig
from torchwise.data.sources import load_source
from torchwise.data.split import Standardizer, split_dataset
from torchwise.errors import DataError


@dataclass
class PreparedData:
    train: Dataset
    val: Dataset | None
    sample_shape: tuple[int, ...]
    out_features: int
    num_classes: int | None
    standardizer: Standardizer | None = None


def prepare_data(cfg: RunConfig, *, train: Dataset | None = None, val: Dataset | None = None,
                 collate_fn: Callable[[list[Any]], Any] = default_collate,
                 builtin_model: bool = True) -> PreparedData:
    """Load (or take) the datasets, split, standardise on the training split, check the labels.

    ``collate_fn`` is the loader's (a user's DataLoader may turn dict samples into (x, y));
    ``builtin_model`` says that torchwise builds the model, so target shapes may be adapted to it.
    """
    if train is None:
        full = load_source(cfg.data, cfg=cfg)
        if cfg.data.val is not None:
            train, val = full, load_source(cfg.data.val, cfg=cfg)
        else:
            train, val = split_dataset(full, val_fraction=cfg.data.val_fraction, seed=cfg.train.seed)
    if len(train) == 0:  # type: ignore[arg-type]
        raise DataError("the training set is empty", hint="check the data source and val_fraction")
    if val is not None and len(val) == 0:  # type: ignore[arg-type]
        raise DataError("the validation set is empty", hint="check data.val, or use data.val_fraction")
    standardizer = None
    if cfg.data.standardize:
        standardizer = Standardizer.fit(train)
        train = standardizer.apply(train)
        val = standardizer.apply(val) if val is not None else None
    if cfg.task.type == "classification":
        # Integer-valued float labels (a CSV or npz written as floats) are class indices.
        train, val = (_long_labels(d) if d is not None else None for d in (train, val))
    elif builtin_model:
        # Built-in models output [batch, features]; a [N] target means one feature per sample.
        train, val = (_column_targets(d) if d is not None else None for d in (train, val))
    x, y = first_batch(train, collate_fn)
    num_classes = None
    if cfg.task.type == "classification":
        num_classes = check_labels(train, val, configured=cfg.task.num_classes)
        out_features = num_classes
    else:
        out_features = max(1, y[0].numel())
    return PreparedData(train=train, val=val, sample_shape=tuple(x.shape[1:]), out_features=out_features,
                        num_classes=num_classes, standardizer=standardizer)


def first_batch(dataset: Dataset, collate_fn: Callable[[list[Any]], Any] = default_collate
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """The first (up to) two samples, collated as the loader will: must be (inputs, targets)."""
    samples = [dataset[i] for i in range(min(2, len(dataset)))]  # type: ignore[arg-type]
    batch = collate_fn(samples)
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        kind = type(samples[0]).__name__
        raise DataError(f"a sample must be (input, target); the dataset returned {kind}",
                        hint="make __getitem__ return (x, y), or give the DataLoader a collate_fn that does")
    return torch.as_tensor(batch[0]), torch.as_tensor(batch[1])


def _long_labels(dataset: Dataset) -> Dataset:
    if isinstance(dataset, TensorDataset) and dataset.tensors[1].is_floating_point():
        x, y = dataset.tensors
        if torch.equal(y, y.round()):
            return TensorDataset(x, y.long())
    return dataset


def _column_targets(dataset: Dataset) -> Dataset:
    if isinstance(dataset, TensorDataset) and dataset.tensors[1].dim() == 1:
        x, y = dataset.tensors
        return TensorDataset(x, y.float().unsqueeze(1))
    return dataset


def check_labels(train: Dataset, val: Dataset | None, *, configured: int | None) -> int | None:
    """Tensor labels must be integers in [0, num_classes); returns num_classes (None when the
    labels cannot be read without loading the whole dataset and none is configured)."""
    labels = [_labels(d) for d in (train, val) if d is not None]
    if any(label is None for label in labels):
        return configured  # a user Dataset: the preflight batch and the loss check the labels
    everything = torch.cat([label.flatten() for label in labels])
    if everything.is_floating_point():
        if not torch.equal(everything, everything.round()):
            raise DataError("classification labels must be integers; these are fractional",
                            hint="set task.type=regression for continuous targets")
    low, high = int(everything.min()), int(everything.max())
    num_classes = configured if configured is not None else high + 1
    if low < 0 or high >= num_classes:
        bad = low if low < 0 else high
        raise DataError(f"label {bad} is outside [0, {num_classes}) (labels span {low}..{high})",
                        hint="labels must be 0..num_classes-1: remap them, or raise task.num_classes")
    if num_classes < 2:
        raise DataError("classification needs at least 2 classes; the labels hold one",
                        hint="check the target column, or set task.type=regression")
    return num_classes


def _labels(dataset: Dataset) -> torch.Tensor | None:
    return dataset.tensors[1] if isinstance(dataset, TensorDataset) else None
