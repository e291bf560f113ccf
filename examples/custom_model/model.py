"""A user's own model: any nn.Module works; torchwise needs no base class."""

from __future__ import annotations

import torch
from torch import nn


class DigitsNet(nn.Module):
    """A small residual MLP for 64-feature inputs."""

    def __init__(self, in_features: int = 64, hidden: int = 128, num_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Linear(in_features, hidden)
        self.block = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, hidden), nn.GELU())
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.stem(x.flatten(1)))
        return self.head(h + self.block(h))
