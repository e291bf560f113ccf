"""`torchwise runs` over a folder of unlike runs: one line per run within 80 columns, differences
computed between runs of the same data and model, everything with --wide and --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

RUNS = {  # name: (config, summary fields)
    "digits-base": ({"data": {"source": "digits"}, "model": {"name": "mlp", "kwargs": {"hidden": [256, 128]}},
                     "optim": {"lr": 0.003}, "train": {"epochs": 30}}, {"epochs": 30}),
    "digits-lr-high": ({"data": {"source": "digits"}, "model": {"name": "mlp", "kwargs": {"hidden": [256, 128]}},
                        "optim": {"lr": 0.03}, "train": {"epochs": 30}}, {"epochs": 12}),
    "digits-small": ({"data": {"source": "digits"}, "model": {"name": "mlp", "kwargs": {}},
                      "optim": {"lr": 0.003}, "train": {"epochs": 5}}, {"epochs": 5}),
    "regression": ({"data": {"source": "synthetic-regression"}, "model": {"name": "linear", "kwargs": {}},
                    "task": {"type": "regression"}, "optim": {"lr": 0.1}}, {"epochs": 3}),
    "a-very-long-run-name-for-a-sweep-trial-0042": (
        {"data": {"source": "csv", "kwargs": {"path": "/data/some/deeply/nested/folder/train.csv"}},
         "model": {"target": "my_models:ResidualTabularTransformerWithManyOptions"}, "optim": {"lr": 0.0001}},
        {"epochs": 40}),
    "python-fit": ({"data": {"source": "python"}, "model": {"name": "mlp", "note": "a Module passed to fit()"},
                    "optim": {"lr": 0.001}}, {"epochs": 2}),
    "python-fit-2": ({"data": {"source": "python"}, "model": {"name": "mlp", "note": "a Module passed to fit()"},
                      "optim": {"lr": 0.01, "weight_decay": 0.1}}, {"epochs": 2}),
    "cnn": ({"data": {"source": "npz", "kwargs": {"path": "images.npz"}}, "model": {"name": "small-cnn"}},
            {"epochs": 9}),
}


def make_runs(folder: Path) -> None:
    for index, (name, (config, fields)) in enumerate(RUNS.items()):
        run = folder / name
        run.mkdir(parents=True)
        (run / "config.yaml").write_text(yaml.safe_dump({"name": name, **config}))
        summary = {"name": name, "status": ["completed", "early_stopped", "failed", "interrupted"][index % 4],
                   "started": f"2026-12-01T10:{index:02d}:00.000+00:00", "wall_seconds": 12.5 * (index + 1),
                   "best": {"metric": "val_accuracy", "value": 0.9 + index / 100, "epoch": 1, "step": 10},
                   **fields}
        (run / "summary.json").write_text(json.dumps(summary))


def runs(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "torchwise", "runs", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "80"}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_eight_unlike_runs_fit_80_columns_one_line_each(tmp_path):
    make_runs(tmp_path)
    lines = runs(str(tmp_path)).rstrip("\n").splitlines()
    assert max(len(line) for line in lines) <= 80, "\n".join(lines)
    assert len(lines) == 1 + len(RUNS)  # a header and one line per run
    (line,) = [line for line in lines if line.startswith("digits-lr-high")]
    assert "early_stopped" in line and "hidden=[256, 128]" in line


def test_differences_are_between_runs_of_the_same_data_and_model(tmp_path):
    make_runs(tmp_path)
    rows = {row["name"]: row for row in json.loads(runs(str(tmp_path), "--json"))}
    assert rows["digits-base"]["family"] == "digits/mlp"
    # Among the three digits MLPs: the LR, the epochs and the hidden sizes, and no contradiction
    # such as model.kwargs=null beside model.kwargs.hidden.
    assert rows["digits-small"]["differs"] == {"model.kwargs.hidden": None, "optim.lr": 0.003, "train.epochs": 5}
    assert rows["python-fit-2"]["differs"] == {"optim.lr": 0.01, "optim.weight_decay": 0.1}
    assert rows["regression"]["differs"] == {} and rows["cnn"]["differs"] == {}  # alone in their family
    wide = runs(str(tmp_path), "--wide")
    (line,) = [line for line in wide.splitlines() if "digits-lr-high" in line]
    assert "model.kwargs.hidden=[256, 128]" in line and "optim.lr=0.03" in wide
