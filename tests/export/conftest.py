"""A digits run shared by the run-folder tests (2 epochs of a small MLP: seconds, not minutes)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def digits_run(tmp_path_factory) -> Path:
    from torchwise.config import load_config
    from torchwise.train.run import run_training

    cfg = load_config(ROOT / "examples/digits.yaml", ["train.epochs=2", "model.kwargs={hidden: [32]}",
                                                      "log.progress=off"])
    return run_training(cfg, runs_dir=tmp_path_factory.mktemp("runs"), name="digits").run_dir


def raw_digits_val_csv(path: Path) -> Path:
    """The run's validation split as raw pixel values 0..16, the way scikit-learn ships them, with
    scikit-learn's column names and the label column ``target``."""
    from sklearn.datasets import load_digits
    from torch.utils.data import TensorDataset

    from torchwise.data.split import split_dataset

    bunch = load_digits()
    # The indices the run held out: the same seeded split, applied to the sample numbers.
    _, val = split_dataset(TensorDataset(torch.arange(len(bunch.target))), val_fraction=0.2, seed=0)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*bunch.feature_names, "target"])
        for index in val.tensors[0].tolist():
            writer.writerow([int(v) for v in bunch.data[index]] + [int(bunch.target[index])])
    return path
