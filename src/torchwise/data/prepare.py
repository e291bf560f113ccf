"""From the data config to train/validation datasets that are checked against the task."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils.data import Dataset, TensorDataset, default_collate

from torchwise.config import RunConfig
from torchwise.data.batch import collate, describe, split_batch
from torchwise.data.loaders import collate_for, plain_tensors
from torchwise.data.sources import load_source
from torchwise.data.split import Standardizer, split_dataset
from torchwise.data.streams import is_stream, peek
from torchwise.errors import DataError


@dataclass
class PreparedData:
    train: Dataset
    val: Dataset | None
    sample_shape: tuple[int, ...]
    out_features: int | None
    num_classes: int | None
    standardizer: Standardizer | None = None
    classes: list[str] | None = None  # class names (a CSV's text labels, a Dataset's `classes`)
    empty_classes: list[int] = field(default_factory=list)  # classes with no training sample


def prepare_data(cfg: RunConfig, *, train: Dataset | None = None, val: Dataset | None = None,
                 collate_fn: Callable[[list[Any]], Any] = collate,
                 builtin_model: bool | None = None) -> PreparedData:
    """Load (or take) the datasets, split, standardise on the training split, check the labels.

    ``collate_fn`` is the loader's (a user's DataLoader may pad or restructure samples);
    ``builtin_model`` says that torchwise builds the model, so target shapes may be adapted to it
    (default: the config names no `model.target`).
    """
    if builtin_model is None:
        builtin_model = cfg.model.target is None
    classes = getattr(train, "classes", None)
    if train is None:
        full = load_source(cfg.data, cfg=cfg)
        classes = getattr(full, "classes", None)
        if cfg.data.val is not None:
            train, val = full, load_source(cfg.data.val, cfg=cfg)
            _same_classes(classes, getattr(val, "classes", None))
        elif is_stream(full):  # a stream cannot be split without reading it: validate on data.val
            train, val = full, None
        else:
            train, val = split_dataset(full, val_fraction=cfg.data.val_fraction, seed=cfg.train.seed)
    if not is_stream(train) and len(train) == 0:  # type: ignore[arg-type]
        raise DataError("the training set is empty", hint="check the data source and val_fraction")
    if val is not None and not is_stream(val) and len(val) == 0:  # type: ignore[arg-type]
        raise DataError("the validation set is empty", hint="check data.val, or use data.val_fraction")
    standardizer = None
    if cfg.data.standardize and is_stream(train):
        raise DataError("data.standardize needs the whole training set, and a stream is read only as it trains",
                        hint="standardise inside the stream's __iter__, or set data.standardize=false")
    if cfg.data.standardize:
        standardizer = Standardizer.fit(train)
        train = standardizer.apply(train)
        val = standardizer.apply(val) if val is not None else None
    kind = cfg.task.type
    if kind == "classification":
        # Integer-valued float labels (a CSV or npz written as floats) are class indices.
        train, val = (_long_labels(d) if d is not None else None for d in (train, val))
    elif kind == "multilabel":
        train, val = (_float_targets(d) if d is not None else None for d in (train, val))
    elif builtin_model:
        # Built-in models output [batch, features]; a [N] target means one feature per sample.
        train, val = (_column_targets(d) if d is not None else None for d in (train, val))
    inputs, target = split_batch(first_batch(train, collate_for(train) or collate_fn))
    if builtin_model and not isinstance(inputs, torch.Tensor):
        raise DataError(f"the built-in models take one tensor input; these samples give {describe(inputs)}",
                        hint="pass your own model (model.target, or fit(model, ...)) that takes these inputs")
    num_classes, empty = None, []
    if kind == "classification":
        num_classes, empty = check_labels(train, val, configured=cfg.task.num_classes,
                                          ignore_index=cfg.task.ignore_index)
        out_features = num_classes
    elif isinstance(target, torch.Tensor) and target.dim():
        out_features = max(1, target[0].numel())
    else:
        out_features = None
    sample_shape = tuple(inputs.shape[1:]) if isinstance(inputs, torch.Tensor) else ()
    return PreparedData(train=train, val=val, sample_shape=sample_shape, out_features=out_features,
                        num_classes=num_classes, standardizer=standardizer,
                        classes=list(classes) if classes is not None else None, empty_classes=empty)


def _same_classes(train: Any, val: Any) -> None:
    if train is not None and val is not None and list(train) != list(val):
        raise DataError(f"the validation source's text labels {list(val)} differ from the training source's "
                        f"{list(train)}: the same name would get another class index",
                        hint="make both files hold the same set of labels, or encode them as numbers")


def first_batch(dataset: Dataset, collate_fn: Callable[[list[Any]], Any] = collate, *,
                split: str = "training") -> Any:
    """The first (up to) two samples, fetched and collated as the loader will (``__getitems__``
    first, as DataLoader does); torch's default_collate is replaced by `collate`, which stacks
    the same way and names the key where samples differ."""
    if is_stream(dataset):
        samples = peek(dataset, 2)  # type: ignore[arg-type]
        if not samples:
            raise DataError(f"the {split} stream yields no sample", hint="check the stream's __iter__")
    else:
        indices = list(range(min(2, len(dataset))))  # type: ignore[arg-type]
        getitems = getattr(dataset, "__getitems__", None)
        samples = getitems(indices) if getitems else [dataset[i] for i in indices]
    if collate_fn is default_collate:
        collate_fn = collate
    try:
        return collate_fn(samples)
    except DataError as err:
        raise DataError(f"the {split} samples do not batch: {err.message}", hint=err.hint) from None


def _long_labels(dataset: Dataset) -> Dataset:
    # Only a plain TensorDataset is rebuilt: a subclass's own __getitem__ must keep running.
    if plain_tensors(dataset) and dataset.tensors[1].is_floating_point():
        x, y = dataset.tensors
        if torch.equal(y, y.round()):
            return TensorDataset(x, y.long())
    return dataset


def _column_targets(dataset: Dataset) -> Dataset:
    if plain_tensors(dataset) and dataset.tensors[1].dim() == 1:
        x, y = dataset.tensors
        return TensorDataset(x, y.float().unsqueeze(1))
    return dataset


def _float_targets(dataset: Dataset) -> Dataset:
    if plain_tensors(dataset) and not dataset.tensors[1].is_floating_point():
        x, y = dataset.tensors
        return TensorDataset(x, y.float())
    return dataset


def check_labels(train: Dataset, val: Dataset | None, *, configured: int | None,
                 ignore_index: int = -100) -> tuple[int | None, list[int]]:
    """Tensor labels must be integers in [0, num_classes) (``ignore_index`` aside); returns
    num_classes (None when the labels cannot be read without loading the whole dataset and none
    is configured) and the classes that no training sample has."""
    labels = [_labels(d) for d in (train, val) if d is not None]
    if any(label is None for label in labels):
        return configured, []  # a user Dataset: the preflight batch and the loss check the labels
    everything = torch.cat([label.flatten() for label in labels])
    if everything.is_floating_point():
        if not torch.equal(everything, everything.round()):
            raise DataError("classification labels must be integers; these are fractional",
                            hint="set task.type=regression for continuous targets")
    everything = everything[everything != ignore_index].long()
    if everything.numel() == 0:
        raise DataError(f"every classification label is task.ignore_index ({ignore_index})",
                        hint="check the target column, or task.ignore_index")
    low, high = int(everything.min()), int(everything.max())
    num_classes = configured if configured is not None else high + 1
    if low < 0 or high >= num_classes:
        bad = low if low < 0 else high
        raise DataError(f"label {bad} is outside [0, {num_classes}) (labels span {low}..{high})",
                        hint="labels must be 0..num_classes-1: remap them, or raise task.num_classes")
    if num_classes < 2:
        raise DataError("classification needs at least 2 classes; the labels hold one",
                        hint="check the target column, or set task.type=regression")
    seen = labels[0].flatten()
    seen = seen[seen != ignore_index].long()
    counts = torch.bincount(seen, minlength=num_classes)
    return num_classes, [int(c) for c in (counts == 0).nonzero().flatten()]


def _labels(dataset: Dataset) -> torch.Tensor | None:
    return dataset.tensors[1] if plain_tensors(dataset) else None  # type: ignore[attr-defined]
