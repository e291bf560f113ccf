"""Small seeded runs with planted pathologies, for the `diagnose` tests: 4 Gaussian blobs, MLPs,
a slow dataset, and `fit` with quick logging of curves and gradient statistics. Every diagnosis
they get is checked to quote only numbers the run's record holds (quoted_numbers.py)."""

from __future__ import annotations

import json
import time

import torch
from tests.diagnose.quoted_numbers import unquoted
from torch import nn
from torch.utils.data import Dataset, TensorDataset

import torchwise


def blobs(n: int, *, seed: int, flip: float = 0.0) -> TensorDataset:
    """4 Gaussian blobs in 10-d (fixed centres), a share ``flip`` of the labels made random."""
    centres = torch.randn(4, 10, generator=torch.Generator().manual_seed(123)) * 1.5
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 4, (n,), generator=g)
    x = centres[y] + torch.randn(n, 10, generator=g)
    flipped = torch.rand(n, generator=g) < flip
    y = torch.where(flipped, torch.randint(0, 4, (n,), generator=g), y)
    return TensorDataset(x, y)


def mlp(*sizes: int, act: type[nn.Module] = nn.ReLU) -> nn.Sequential:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        layers += [nn.Linear(a, b), act()]
    return nn.Sequential(*layers[:-1])


class SlowData(Dataset):
    def __init__(self, data: Dataset) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        time.sleep(0.004)  # a slow decode: the loader sets the pace
        return self.data[index]


def config(**sections) -> dict:
    base = {"log": {"progress": "off", "every_n_steps": 4, "grad_stats_every": 8},
            "checkpoint": {"enabled": False}, "train": {"epochs": 8, "batch_size": 32}}
    for key, value in sections.items():
        base[key] = {**base.get(key, {}), **value}
    return base


def train(tmp_path, name, model, train_data=None, val_data=None, *, loss=None, **sections):
    """Train a planted run (``loss``: yours, as fit takes it); its diagnosis quotes no number that
    the record does not hold."""
    result = torchwise.fit(model, train_data or blobs(512, seed=1), val_data or blobs(256, seed=2),
                           config=config(**sections), runs_dir=tmp_path, name=name, loss=loss)
    diagnosis = json.loads((result.run_dir / "diagnosis.json").read_text())
    for finding in diagnosis["findings"]:
        assert unquoted(finding, result.run_dir) == [], finding
    return result, diagnosis


def codes(diagnosis: dict, *severities: str) -> set[str]:
    return {f["code"] for f in diagnosis["findings"] if f["severity"] in severities}
