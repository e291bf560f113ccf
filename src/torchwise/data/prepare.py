"""From the data config to train/validation datasets that are checked against the task."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils.data import Dataset, TensorDataset

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


def prepare_data(cfg: RunConfig, *, train: Dataset | None = None, val: Dataset | None = None) -> PreparedData:
    """Load (or take) the datasets, split, standardise on the training split, check the labels."""
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
    x, y = first_sample(train)
    num_classes = None
    if cfg.task.type == "classification":
        num_classes = check_labels(train, val, configured=cfg.task.num_classes)
        out_features = num_classes
    else:
        out_features = max(1, y.numel())
    return PreparedData(train=train, val=val, sample_shape=tuple(x.shape), out_features=out_features,
                        num_classes=num_classes, standardizer=standardizer)


def first_sample(dataset: Dataset) -> tuple[torch.Tensor, torch.Tensor]:
    sample = dataset[0]
    if not isinstance(sample, (tuple, list)) or len(sample) != 2:
        raise DataError(f"a sample must be (input, target); the dataset returned {type(sample).__name__}",
                        hint="make __getitem__ return (x, y)")
    return torch.as_tensor(sample[0]), torch.as_tensor(sample[1])


def check_labels(train: Dataset, val: Dataset | None, *, configured: int | None) -> int:
    """Classification labels must be integers in [0, num_classes); returns num_classes."""
    labels = [_labels(d) for d in (train, val) if d is not None]
    if any(label is None for label in labels):
        if configured is None:
            raise DataError("cannot infer the number of classes from this dataset",
                            hint="set task.num_classes")
        return configured
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
