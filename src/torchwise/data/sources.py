"""Data sources: each turns a `SourceConfig` into a torch Dataset.

Tensor-backed sources (built-ins, CSV, npz, pt) return a `TensorDataset` so that they can be
split, standardised and checked; a user target returns whatever Dataset it builds.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from torch.utils.data import Dataset, TensorDataset

from torchwise.config import RunConfig, SourceConfig
from torchwise.errors import ConfigError, DataError
from torchwise.targets import resolve_factory


@runtime_checkable
class MapStyle(Protocol):
    """What a DataLoader indexes: a class with these two methods is a dataset without subclassing one."""

    def __getitem__(self, index: Any) -> Any: ...

    def __len__(self) -> int: ...


BUILTIN_SOURCES = ("digits", "synthetic-regression")
FILE_SOURCES = ("csv", "npz", "pt")


def load_source(source: SourceConfig, *, cfg: RunConfig) -> Dataset:
    """Build the Dataset a source describes."""
    kind = source.source
    if kind == "digits":
        return digits(**_kwargs(source, {"normalize"}))
    if kind == "synthetic-regression":
        kwargs = {"seed": cfg.train.seed, **_kwargs(source, {"n", "w", "b", "noise", "seed"})}
        return synthetic_regression(**kwargs)
    if kind == "target":
        if not source.target:
            raise ConfigError("data source 'target' needs data.target",
                              hint="set data.target: my_package.data:make_dataset")
        factory = resolve_factory(source.target, search_dir=cfg.base_dir, makes=(Dataset, MapStyle),
                                  what="a Dataset")
        dataset = factory(**source.kwargs)
        if not hasattr(dataset, "__getitem__"):
            raise DataError(f"{source.target} returned {type(dataset).__name__}, not a Dataset",
                            hint="return a torch.utils.data.Dataset (with __len__ and __getitem__)")
        return dataset
    if kind == "python":
        raise ConfigError("this run was started by torchwise.fit() with data passed from Python",
                          hint="resume it from Python: torchwise.fit(model, train_data, resume=RUN_DIR)")
    if kind == "hf":
        from torchwise.hf.data import load_hf_source

        if source.path is None or not cfg.resolve_path(source.path).exists():
            raise ConfigError(f"data source 'hf' needs data.path naming a file or folder that exists "
                              f"(it is {source.path})", hint="point data.path at a csv/json/parquet file or a "
                                                             "save_to_disk folder")
        return load_hf_source(cfg.resolve_path(source.path),
                              tokenizer_path=cfg.resolve_path(source.tokenizer) if source.tokenizer else None,
                              text_column=source.text_column, label_column=source.label_column,
                              max_length=source.max_length)
    if kind in FILE_SOURCES:
        if source.path is None:
            raise ConfigError(f"data source {kind!r} needs data.path",
                              hint=f"set data.path to the .{kind} file")
        path = cfg.resolve_path(source.path)
        if not path.is_file():
            raise DataError(f"data file {str(path)!r} does not exist",
                            hint="check data.path (relative paths start at the config file's folder)")
        if kind == "csv":
            return read_csv(path, target_column=source.target_column,
                            feature_columns=source.feature_columns)
        return read_tensor_file(path, x_key=source.x_key, y_key=source.y_key)
    raise ConfigError(f"unknown data source {kind!r}",
                      hint=f"use one of {', '.join(BUILTIN_SOURCES + FILE_SOURCES)}, 'hf' or 'target'")


def _kwargs(source: SourceConfig, allowed: set[str]) -> dict[str, Any]:
    unknown = set(source.kwargs) - allowed
    if unknown:
        raise ConfigError(f"data.kwargs has keys {sorted(unknown)} that source {source.source!r} does not take",
                          hint=f"it takes: {', '.join(sorted(allowed))}")
    return dict(source.kwargs)


# Digits pixels are counts of set bits in 4x4 blocks, 0..16; the source scales them to [0, 1].
DIGITS_SCALE = 1 / 16


def input_scale(source: SourceConfig) -> float:
    """The factor a built-in source multiplies the raw features by before anything else (digits:
    1/16 unless ``normalize: false``); 1.0 for every other source. Export writes it in the
    manifest, so that a user's raw pixels get the model's inputs."""
    if source.source == "digits" and source.kwargs.get("normalize", True):
        return DIGITS_SCALE
    return 1.0


def feature_names(source: SourceConfig, *, cfg: RunConfig) -> list[str] | None:
    """The names of the feature columns, where the source has them (digits: scikit-learn's
    ``pixel_<row>_<col>``; a CSV: its header), so that a user's file can be matched by name."""
    if source.source == "digits":
        from sklearn.datasets import load_digits

        return list(load_digits().feature_names)
    if source.source == "csv" and source.path is not None:
        header = _csv_header(cfg.resolve_path(source.path))
        if header is None:
            return None
        target = source.target_column or header[-1]
        return source.feature_columns or [name for name in header if name != target]
    return None


def target_name(source: SourceConfig, *, cfg: RunConfig) -> str | None:
    """The name of the label or target column (digits: ``target``, as scikit-learn names it)."""
    if source.source == "digits":
        return "target"
    if source.source == "csv" and source.path is not None:
        header = _csv_header(cfg.resolve_path(source.path))
        return source.target_column or (header[-1] if header else None)
    return None


def _csv_header(path: Path) -> list[str] | None:
    try:
        with path.open(newline="") as handle:
            return [name.strip() for name in next(csv.reader(handle), [])] or None
    except OSError:
        return None


def digits(*, normalize: bool = True) -> TensorDataset:
    """The 1,797 8x8 handwritten digits scikit-learn ships (no download). Features scaled to [0, 1]."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise DataError("the built-in digits set needs scikit-learn",
                        hint="pip install 'torchwise[datasets]'") from None
    bunch = load_digits()
    x = torch.tensor(bunch.data, dtype=torch.float32)
    if normalize:
        x = x * DIGITS_SCALE  # a power of two: bit-identical to x / 16
    return TensorDataset(x, torch.tensor(bunch.target, dtype=torch.int64))


def synthetic_regression(*, n: int = 1000, w: float = 2.0, b: float = 0.5,
                         noise: float = 0.1, seed: int = 0) -> TensorDataset:
    """``y = w*x + b + noise`` on x uniform in [-1, 1]: the classic first fit."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 1, generator=generator) * 2 - 1
    y = w * x + b + noise * torch.randn(n, 1, generator=generator)
    return TensorDataset(x, y)


def read_csv(path: Path, *, target_column: str | None,
             feature_columns: list[str] | None) -> TensorDataset:
    """A CSV with a header row; every feature and the target must be numeric and finite."""
    try:
        with path.open(newline="") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"cannot read {path}: {err}", hint="check the file is a readable text CSV") from None
    if len(rows) < 2:
        raise DataError(f"{path} has no data rows", hint="the first row is the header; samples follow")
    header = [name.strip() for name in rows[0]]
    target = target_column or header[-1]
    if target not in header:
        raise DataError(f"{path} has no column {target!r}", hint=f"columns: {', '.join(header)}")
    features = feature_columns or [name for name in header if name != target]
    missing = [name for name in features if name not in header]
    if missing:
        raise DataError(f"{path} has no columns {missing}", hint=f"columns: {', '.join(header)}")
    columns = [header.index(name) for name in features]
    target_index = header.index(target)
    for row_number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise DataError(f"{path} line {row_number} has {len(row)} cells, the header has {len(header)}",
                            hint="every row needs one value per column")
    # Text labels ('setosa', 'virginica') are class names: index them in sorted order, keep the names.
    classes = _text_labels([row[target_index].strip() for row in rows[1:]])
    values = np.empty((len(rows) - 1, len(columns) + 1), dtype=np.float64)
    for row_number, row in enumerate(rows[1:], start=2):
        if classes is not None:
            values[row_number - 2, -1] = classes.index(row[target_index].strip())
        for out, index in enumerate(columns if classes is not None else [*columns, target_index]):
            cell = row[index].strip()
            if not cell:
                raise DataError(f"{path} line {row_number}, column {header[index]!r} is empty",
                                hint="fill or drop missing values before training")
            try:
                value = float(cell)
            except ValueError:
                raise DataError(f"{path} line {row_number}, column {header[index]!r}: {cell!r} is not a number",
                                hint="encode categories as numbers and remove text cells") from None
            if not math.isfinite(value):
                raise DataError(f"{path} line {row_number}, column {header[index]!r} is {cell or 'empty'}",
                                hint="fill or drop missing values before training") from None
            values[row_number - 2, out] = value
    x = torch.tensor(values[:, :-1], dtype=torch.float32)
    y_values = values[:, -1]
    if np.all(y_values == np.round(y_values)):
        y = torch.tensor(y_values, dtype=torch.int64)
    else:
        y = torch.tensor(y_values, dtype=torch.float32).unsqueeze(1)
    dataset = TensorDataset(x, y)
    if classes is not None:
        dataset.classes = classes  # type: ignore[attr-defined]  # torchvision's name for them
    return dataset


def _text_labels(cells: list[str]) -> list[str] | None:
    """The sorted class names when any non-empty label is not a number, else None."""
    def is_number(cell: str) -> bool:
        try:
            float(cell)
        except ValueError:
            return False
        return True

    if all(is_number(cell) or not cell for cell in cells):
        return None
    if any(not cell for cell in cells):
        row = cells.index("") + 2
        raise DataError(f"line {row}: the label is empty", hint="fill or drop rows without a label")
    return sorted(set(cells))


def read_tensor_file(path: Path, *, x_key: str, y_key: str) -> TensorDataset:
    """``.npz`` (no pickle) or ``.pt`` (weights_only=True) holding features and targets."""
    try:
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                arrays = {key: torch.from_numpy(archive[key]) for key in archive.files}
        else:
            arrays = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # numpy and torch raise many types for a bad file
        raise DataError(f"cannot read {path}: {err}",
                        hint="a .npz from np.savez, or a .pt from torch.save of a dict of tensors") from None
    if isinstance(arrays, (tuple, list)) and len(arrays) == 2:
        arrays = {x_key: arrays[0], y_key: arrays[1]}
    if not isinstance(arrays, dict) or x_key not in arrays or y_key not in arrays:
        found = sorted(arrays) if isinstance(arrays, dict) else type(arrays).__name__
        raise DataError(f"{path} must hold arrays {x_key!r} and {y_key!r}; found {found}",
                        hint="set data.x_key / data.y_key to the names in the file")
    x, y = torch.as_tensor(arrays[x_key]), torch.as_tensor(arrays[y_key])
    if len(x) != len(y):
        raise DataError(f"{path}: {x_key} has {len(x)} samples but {y_key} has {len(y)}",
                        hint="features and targets need one row per sample")
    if x.is_floating_point():
        x = x.float()
    if y.is_floating_point():
        y = y.float()
        if not torch.isfinite(y).all():
            raise DataError(f"{path}: {y_key} holds NaN or inf", hint="drop or fill those samples")
    if x.is_floating_point() and not torch.isfinite(x).all():
        row = int((~torch.isfinite(x)).flatten(1).any(1).nonzero()[0])
        raise DataError(f"{path}: {x_key} holds NaN or inf (first at sample {row})",
                        hint="drop or fill those samples")
    return TensorDataset(x, y)
