"""Small shared pieces for tests: tiny datasets and configs that train in well under a second."""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.data import TensorDataset


def tiny_classification(n: int = 100, features: int = 6, classes: int = 3, seed: int = 0) -> TensorDataset:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=generator)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    return TensorDataset(x, y.clamp(max=classes - 1))


def quiet_config(**sections: dict[str, Any]) -> dict[str, Any]:
    """A config dict with progress off and checkpoints off unless a test turns them on."""
    base: dict[str, Any] = {"log": {"progress": "off", "every_n_steps": 1},
                            "checkpoint": {"enabled": False}}
    for key, value in sections.items():
        base[key] = {**base.get(key, {}), **value}
    return base


def step_losses(run_dir) -> list[float]:
    from torchwise.runs.folder import read_jsonl

    return [r["loss"] for r in read_jsonl(run_dir / "metrics.jsonl") if r["split"] == "train"]
