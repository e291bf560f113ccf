"""Data and models for the planted runs of `diagnose`: the shapes people really train, small.

Each planted run (``dev.py``, ``heldout.py``) is a seeded generator built from these pieces and
trained for real through `torchwise.fit` on the CPU in a few seconds. Frozen with the held-out
half (its sha256 is in the commit that added it): new pieces go in ``dev.py``.

The setups follow public training code: an imbalanced binary/3-class classifier on tabular
features (credit-card fraud style, 90/10), a tabular regressor on raw prices (the California /
Boston housing tutorials that forget to scale the target), a GRU over token sequences, a small
CNN over 1x8x8 images, a frozen backbone with a trained head (fine-tuning), BatchNorm MLPs.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.utils.data import Dataset, TensorDataset


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def blobs(n: int, *, seed: int, classes: int = 4, dim: int = 10, spread: float = 1.5,
          weights: list[float] | None = None, flip: float = 0.0) -> TensorDataset:
    """Gaussian blobs (fixed centres per ``classes``/``dim``); ``weights``: the class prior."""
    centres = torch.randn(classes, dim, generator=generator(100 + classes * dim)) * spread
    g = generator(seed)
    prior = torch.tensor(weights or [1.0] * classes)
    y = torch.multinomial(prior / prior.sum(), n, replacement=True, generator=g)
    x = centres[y] + torch.randn(n, dim, generator=g)
    flipped = torch.rand(n, generator=g) < flip
    y = torch.where(flipped, torch.randint(0, classes, (n,), generator=g), y)
    return TensorDataset(x, y)


def noise_labels(n: int, *, seed: int, weights: list[float], dim: int = 10) -> TensorDataset:
    """Features that carry nothing about the labels, labels drawn from ``weights``."""
    g = generator(seed)
    prior = torch.tensor(weights)
    return TensorDataset(torch.randn(n, dim, generator=g),
                         torch.multinomial(prior / prior.sum(), n, replacement=True, generator=g))


def linear_targets(n: int, *, seed: int, dim: int = 8, noise: float = 0.3, scale: float = 1.0,
                   offset: float = 0.0, signal: bool = True) -> TensorDataset:
    """y = x.w + noise, times ``scale`` plus ``offset``; ``signal=False``: y independent of x."""
    w = torch.randn(dim, generator=generator(7))
    g = generator(seed)
    x = torch.randn(n, dim, generator=g)
    base = x @ w / math.sqrt(dim) if signal else torch.randn(n, generator=g)
    y = (base + noise * torch.randn(n, generator=g)) * scale + offset
    return TensorDataset(x, y.unsqueeze(1))


def wavy_targets(n: int, *, seed: int) -> TensorDataset:
    """y = sin(3 x0) cos(3 x1) + x2^2: what a linear model cannot fit."""
    g = generator(seed)
    x = torch.rand(n, 4, generator=g) * 2 - 1
    y = torch.sin(3 * x[:, 0]) * torch.cos(3 * x[:, 1]) + x[:, 2] ** 2
    return TensorDataset(x, y.unsqueeze(1))


def token_sequences(n: int, *, seed: int, length: int = 12, vocab: int = 8) -> TensorDataset:
    """Token ids [n, length]; label 1 when token 1 appears more often than token 2."""
    tokens = torch.randint(0, vocab, (n, length), generator=generator(seed))
    labels = ((tokens == 1).sum(1) > (tokens == 2).sum(1)).long()
    return TensorDataset(tokens, labels)


def value_sequences(n: int, *, seed: int, length: int = 10, signal: bool = True) -> TensorDataset:
    """Sequences [n, length, 1]; target the mean of the first half (``signal=False``: noise)."""
    g = generator(seed)
    x = torch.randn(n, length, 1, generator=g)
    y = x[:, : length // 2, 0].mean(1) * 2 if signal else torch.randn(n, generator=g)
    return TensorDataset(x, y.unsqueeze(1))


def squares(n: int, *, seed: int) -> TensorDataset:
    """1x8x8 images of noise with a bright 3x3 square in one of four corners (the class)."""
    g = generator(seed)
    y = torch.randint(0, 4, (n,), generator=g)
    x = torch.randn(n, 1, 8, 8, generator=g) * 0.5
    for i, corner in enumerate(y.tolist()):
        r, c = divmod(corner, 2)
        x[i, 0, r * 5: r * 5 + 3, c * 5: c * 5 + 3] += 2.0
    return TensorDataset(x, y)


def mlp(*sizes: int, act: type[nn.Module] = nn.ReLU, norm: type[nn.Module] | None = None,
        seed: int = 0) -> nn.Sequential:
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers += [norm(b)] if norm is not None else []
            layers.append(act())
    return nn.Sequential(*layers)


class TokenGRU(nn.Module):
    def __init__(self, vocab: int = 8, hidden: int = 32, out: int = 2) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(vocab, 16)
        self.rnn = nn.GRU(16, hidden, batch_first=True)
        self.head = nn.Linear(hidden, out)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        _, h = self.rnn(self.embed(tokens))
        return self.head(h[-1])


class ValueGRU(nn.Module):
    def __init__(self, hidden: int = 32) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.rnn = nn.GRU(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, h = self.rnn(x)
        return self.head(h[-1])


def small_cnn(classes: int = 4, *, norm: bool = False) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), *([nn.BatchNorm2d(8)] if norm else []), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(16, classes))


def freeze_all_but(model: nn.Module, *keep: str) -> nn.Module:
    """requires_grad=False on every parameter whose name is not in ``keep``."""
    for name, param in model.named_parameters():
        param.requires_grad_(name in keep)
    return model


class ShiftsAfter(Dataset):
    """A dataset whose inputs change units after ``calls`` reads: a preprocessing step that stops
    applying mid-run (a cache rebuilt without the scaling, a second shard in raw units)."""

    def __init__(self, data: TensorDataset, *, calls: int, factor: float) -> None:
        self.data, self.calls, self.factor, self.reads = data, calls, factor, 0

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        self.reads += 1
        x, y = self.data[index]
        return (x * self.factor if self.reads > self.calls else x), y


class BreaksAt(Dataset):
    """A dataset whose sample ``bad`` cannot be read (a truncated image file)."""

    def __init__(self, data: TensorDataset, *, bad: int) -> None:
        self.data, self.bad = data, bad

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        if index == self.bad:
            raise OSError(f"image file is truncated (sample {index}: 12 bytes not processed)")
        return self.data[index]


def with_bad_values(data: TensorDataset, *, rows: list[int], value: float) -> TensorDataset:
    """A copy whose input rows ``rows`` hold ``value`` (NaN, inf) in their first feature."""
    x = data.tensors[0].clone()
    x.view(len(x), -1)[rows, 0] = value
    return TensorDataset(x, data.tensors[1])


def base_config(**sections) -> dict:
    config = {"log": {"progress": "off", "every_n_steps": 4, "grad_stats_every": 8},
              "checkpoint": {"enabled": False}, "train": {"epochs": 8, "batch_size": 32}}
    for key, value in sections.items():
        config[key] = {**config.get(key, {}), **value}
    return config
