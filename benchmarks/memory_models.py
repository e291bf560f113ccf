"""The five models the memory estimator is checked on (CPU here, CUDA in gpu.py), each with a
synthetic dataset of the shape it eats: an MLP, a small CNN, a small transformer, an LSTM and a
ResNet-like net with BatchNorm."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.utils.data import TensorDataset

from torchwise.models.builtin import SmallCNN, mlp

VOCAB, SEQ, CLASSES = 1000, 64, 10


class TinyTransformer(nn.Module):
    def __init__(self, width: int = 128, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        block = nn.TransformerEncoderLayer(width, nhead=4, dim_feedforward=4 * width, batch_first=True,
                                           dropout=0.1)
        self.encoder = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, CLASSES)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(self.embed(ids)).mean(1))


class LSTMClassifier(nn.Module):
    def __init__(self, width: int = 128) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.lstm = nn.LSTM(width, width, num_layers=2, batch_first=True)
        self.head = nn.Linear(width, CLASSES)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        output, _ = self.lstm(self.embed(ids))
        return self.head(output[:, -1])


class Residual(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels),
                                  nn.ReLU(), nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.body(x))


def resnet_like(width: int = 32) -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                         Residual(width), nn.Conv2d(width, 2 * width, 3, stride=2, padding=1, bias=False),
                         nn.BatchNorm2d(2 * width), nn.ReLU(), Residual(2 * width),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, CLASSES))


def _images(n: int, shape: tuple[int, ...]) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    return TensorDataset(torch.randn(n, *shape, generator=generator),
                         torch.randint(0, CLASSES, (n,), generator=generator))


def _tokens(n: int) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    return TensorDataset(torch.randint(0, VOCAB, (n, SEQ), generator=generator),
                         torch.randint(0, CLASSES, (n,), generator=generator))


def five_models(samples: int = 512) -> dict[str, Callable[[], tuple[nn.Module, TensorDataset]]]:
    """name -> a factory of (model, dataset), seeded, so every measurement starts the same."""
    def seeded(build: Callable[[], nn.Module], data: Callable[[], TensorDataset]) -> Callable:
        def make() -> tuple[nn.Module, TensorDataset]:
            torch.manual_seed(0)
            return build(), data()
        return make

    return {
        "mlp": seeded(lambda: mlp(784, CLASSES, hidden=[512, 256]), lambda: _images(samples, (784,))),
        "small-cnn": seeded(lambda: SmallCNN((3, 32, 32), CLASSES), lambda: _images(samples, (3, 32, 32))),
        "transformer": seeded(TinyTransformer, lambda: _tokens(samples)),
        "lstm": seeded(LSTMClassifier, lambda: _tokens(samples)),
        "resnet-bn": seeded(resnet_like, lambda: _images(samples, (3, 32, 32))),
    }
