"""Bad input gets `error:` + `hint:`, exit 2, no traceback; a run that crashed mid-training
leaves a folder that says `failed`, one that trained nothing leaves none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from torchwise.cli import main

QUIET = ["--run-dir", "{runs}", "-q", "log.progress=off", "checkpoint.enabled=false", "train.epochs=1"]


def train(tmp_path: Path, capsys, config: str, *extra: str) -> tuple[int, str]:
    path = tmp_path / "cfg.yaml"
    path.write_text(config)
    args = ["train", str(path), *[a.format(runs=tmp_path / "runs") for a in QUIET], *extra]
    with pytest.raises(SystemExit) as exit_:
        main(args)
    return exit_.value.code, capsys.readouterr().err


def failed_summary(tmp_path: Path) -> dict:
    (run,) = (tmp_path / "runs").iterdir()
    return json.loads((run / "summary.json").read_text())


def test_unknown_key_exits_2_without_traceback(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("optim:\n  lrr: 0.1\n")
    out = subprocess.run([sys.executable, "-m", "torchwise", "train", str(path)], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.splitlines() == ["error: unknown config key 'optim.lrr'", "hint: did you mean 'optim.lr'?"]
    assert not (tmp_path / "runs").exists()


def test_debug_shows_the_traceback(tmp_path, capsys):
    path = tmp_path / "cfg.yaml"
    path.write_text("optim:\n  lrr: 0.1\n")
    with pytest.raises(SystemExit) as exit_:
        main(["--debug", "train", str(path)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "ConfigError" in err and "error: unknown config key 'optim.lrr'" in err


def test_missing_data_file(tmp_path, capsys):
    code, err = train(tmp_path, capsys, "data: {source: csv, path: nowhere.csv}\n")
    assert code == 2
    assert f"error: data file '{tmp_path / 'nowhere.csv'}' does not exist" in err
    assert "hint: check data.path" in err
    assert not (tmp_path / "runs").exists()  # nothing was trained: no failed run folder


def test_csv_with_a_non_numeric_cell_names_row_and_column(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a,b,label\n1,2,0\n3,oops,1\n")
    code, err = train(tmp_path, capsys, "data: {source: csv, path: d.csv}\n")
    assert code == 2
    assert "line 3, column 'b': 'oops' is not a number" in err


def test_csv_with_nan(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a,b,label\n1,2,0\n3,nan,1\n4,5,1\n")
    code, err = train(tmp_path, capsys, "data: {source: csv, path: d.csv}\n")
    assert code == 2 and "line 3, column 'b' is nan" in err and "hint: fill or drop missing values" in err


def test_labels_outside_the_class_range(tmp_path, capsys):
    np.savez(tmp_path / "d.npz", x=np.random.rand(20, 4).astype("float32"), y=np.arange(20) % 4)
    code, err = train(tmp_path, capsys, "data: {source: npz, path: d.npz}\ntask: {num_classes: 3}\n")
    assert code == 2
    assert "error: label 3 is outside [0, 3) (labels span 0..3)" in err
    assert "raise task.num_classes" in err


def test_output_shape_that_does_not_fit_the_targets(tmp_path, capsys):
    np.savez(tmp_path / "d.npz", x=np.random.rand(20, 4).astype("float32"), y=np.arange(20) % 4)
    code, err = train(tmp_path, capsys, "data: {source: npz, path: d.npz}\nmodel: {name: linear}\n",
                      "task.num_classes=4", "model.target=torch.nn:Linear",
                      "model.kwargs={in_features: 4, out_features: 7}")
    assert code == 2
    assert "model output has shape [2, 7] but classification targets of shape [2] need [batch, 4]" in err
    assert "hint: make the last layer (the model) output 4 features" in err or "output 4 features" in err


def test_tensor_on_another_device_inside_a_user_model(tmp_path, capsys):
    (tmp_path / "bad_model.py").write_text(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(64, 10)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x) + torch.zeros(10, device='meta')  # made on a fixed device\n")
    code, err = train(tmp_path, capsys, "model: {target: bad_model:Net}\n")
    assert code == 2
    assert "failed on its first training batch" in err and "device" in err
    assert "hint: a tensor made inside forward() is on another device" in err


def test_empty_dataset_and_a_split_that_leaves_nothing(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a,label\n")
    code, err = train(tmp_path, capsys, "data: {source: csv, path: d.csv}\n")
    assert code == 2 and "has no data rows" in err
    (tmp_path / "one.csv").write_text("a,label\n1,0\n")
    code, err = train(tmp_path, capsys, "data: {source: csv, path: one.csv, val_fraction: 0.5}\n")
    assert code == 2 and "leaves no training data" in err and "lower data.val_fraction" in err


def test_pt_files_are_read_without_unpickling_code(tmp_path, capsys):
    torch.save({"x": torch.randn(10, 3), "y": torch.arange(10) % 2}, tmp_path / "ok.pt")
    (tmp_path / "evil.pt").write_bytes(b"\x80\x04\x95not a tensor file")
    code, err = train(tmp_path, capsys, "data: {source: pt, path: evil.pt}\n")
    assert code == 2 and "cannot read" in err
    from torchwise.data.sources import read_tensor_file

    assert len(read_tensor_file(tmp_path / "ok.pt", x_key="x", y_key="y")) == 10


def test_a_crash_mid_training_prints_the_explanation(tmp_path, capsys):
    (tmp_path / "crash_model.py").write_text(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(64, 10)\n"
        "        self.calls = 0\n"
        "    def forward(self, x):\n"
        "        self.calls += 1\n"
        "        if self.training and self.calls > 3:  # a shape bug that shows up mid-run\n"
        "            return torch.nn.functional.linear(x[:, :3], torch.zeros(2, 4))\n"
        "        return self.fc(x)\n")
    code, err = train(tmp_path, capsys, "model: {target: crash_model:Net}\n")
    assert code == 1
    assert "error: training crashed: RuntimeError: mat1 and mat2 shapes cannot be multiplied" in err
    assert "A Linear layer expects 4 input features but got 3" in err
    summary = failed_summary(tmp_path)
    assert summary["status"] == "failed" and summary["reason"].startswith("RuntimeError: mat1 and mat2")


def test_debug_may_come_after_the_command(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("optim:\n  lrr: 0.1\n")
    out = subprocess.run([sys.executable, "-m", "torchwise", "train", str(path), "--debug"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" in out.stderr and "ConfigError" in out.stderr
