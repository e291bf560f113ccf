"""A tiny config that trains a trial in a fraction of a second (after the first import)."""

from __future__ import annotations

from pathlib import Path

import pytest

TINY = """\
name: tiny
data: {source: synthetic-regression, kwargs: {n: 64}, val_fraction: 0.25}
model: {name: mlp, kwargs: {hidden: [8]}}
task: {type: regression}
optim: {lr: 0.01}
train: {epochs: 2, batch_size: 16, device: cpu, seed: 0}
log: {progress: "off", grad_stats_every: null}
"""

SPACE = """\
optim.lr: {log_float: [1e-3, 1e-1]}
model.kwargs.hidden: {choice: [[4], [8], [16, 8]]}
"""


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    """(config file, space file) in tmp_path."""
    config, space = tmp_path / "tiny.yaml", tmp_path / "space.yaml"
    config.write_text(TINY)
    space.write_text(SPACE)
    return config, space
