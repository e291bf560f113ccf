"""Small models for the export tests: dict inputs, data-dependent control flow, a Python-side branch."""

from __future__ import annotations

import torch
from torch import nn


class DictInput(nn.Module):
    """Called as model(**batch): token ids and a float mask, as a text model's batch would be."""

    def __init__(self, vocab: int = 20, width: int = 8, classes: int = 3) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, classes)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        pooled = (self.embed(ids) * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        return {"logits": self.head(pooled), "pooled": pooled}


class BranchOnValue(nn.Module):
    """Data-dependent control flow in plain Python: which layer runs depends on the input's values."""

    def __init__(self) -> None:
        super().__init__()
        self.positive = nn.Linear(4, 3)
        self.negative = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return self.positive(x)
        return self.negative(x)


class BranchWithCond(BranchOnValue):
    """The same branch written with torch.cond, which torch.export (and so ONNX) can capture."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.sum() > 0, lambda t: self.positive(t), lambda t: self.negative(t), (x,))


class UnscriptableBranch(nn.Module):
    """TorchScript cannot script ``*extra``, so it traces, freezing the ``if`` below."""

    def __init__(self) -> None:
        super().__init__()
        self.small = nn.Linear(4, 3)
        self.large = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor, *extra: torch.Tensor) -> torch.Tensor:
        if x.abs().max() > 100:
            return self.large(x)
        return self.small(x)


class FixedBatch(nn.Module):
    """Fixes the batch size at 8 with a literal view, as first scripts often do."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x).view(8, -1)


class Noisy(nn.Module):
    """Adds fresh noise on every call, so no artefact can match the eager model."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x) + 1e-3 * torch.randn(x.shape[0], 3)
