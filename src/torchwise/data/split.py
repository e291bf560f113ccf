"""The seeded train/validation split and standardisation fitted on the training split only."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils.data import Dataset, Subset, TensorDataset

from torchwise.data.loaders import plain_tensors
from torchwise.errors import ConfigError, DataError


def split_dataset(dataset: Dataset, *, val_fraction: float, seed: int) -> tuple[Dataset, Dataset | None]:
    """Hold out ``val_fraction`` of the samples, chosen by a permutation seeded with ``seed``."""
    total = len(dataset)  # type: ignore[arg-type]
    if total == 0:
        raise DataError("the dataset is empty", hint="check the data source and its path")
    if val_fraction == 0:
        return dataset, None
    val_size = max(1, round(total * val_fraction))
    if val_size >= total:
        raise DataError(f"val_fraction={val_fraction} of {total} samples leaves no training data",
                        hint="lower data.val_fraction or add data")
    order = torch.randperm(total, generator=torch.Generator().manual_seed(seed)).tolist()
    return _take(dataset, order[val_size:]), _take(dataset, order[:val_size])


def _take(dataset: Dataset, indices: list[int]) -> Dataset:
    # Keep tensor data as tensors (fast batching, and standardisation can see it); a subclass
    # stays itself behind a Subset, so that its own __getitem__ still runs.
    if plain_tensors(dataset):
        index = torch.tensor(indices)
        return TensorDataset(*(t[index] for t in dataset.tensors))
    return Subset(dataset, indices)


@dataclass(frozen=True)
class Standardizer:
    """Feature mean and std of the training split, applied to every split."""

    mean: torch.Tensor
    std: torch.Tensor

    @classmethod
    def fit(cls, dataset: Dataset) -> Standardizer:
        if not plain_tensors(dataset):
            raise ConfigError("data.standardize works on tensor sources (built-in, csv, npz, pt, a plain "
                              f"TensorDataset); this is a {type(dataset).__name__}, whose __getitem__ it would skip",
                              hint="standardise inside your Dataset, or set data.standardize=false")
        assert isinstance(dataset, TensorDataset)
        x = dataset.tensors[0].double()
        # A constant feature has std 0; dividing by 1 leaves it centred instead of NaN.
        std = x.std(0)
        return cls(mean=x.mean(0).float(), std=torch.where(std > 0, std, torch.ones_like(std)).float())

    def apply(self, dataset: Dataset) -> TensorDataset:
        assert plain_tensors(dataset) and isinstance(dataset, TensorDataset)
        x, *rest = dataset.tensors
        return TensorDataset((x - self.mean) / self.std, *rest)
