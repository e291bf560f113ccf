"""`torchwise runs`: every way a run can end shows as itself, the SIGKILLed one included, and
`runs compare` diffs configs and metrics and draws the curves."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from torch import nn

import torchwise

KILL_CONFIG = """
data: {source: digits}
model: {name: mlp, kwargs: {hidden: [16]}}
train: {max_steps: 100000, epochs: 1000, batch_size: 32}
log: {every_n_steps: 1, progress: off}
checkpoint: {enabled: false}
"""


class Crashes(nn.Module):
    def __init__(self, after: int, how: str) -> None:
        super().__init__()
        self.layer, self.after, self.how, self.calls = nn.Linear(6, 3), after, how, 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.training and self.calls == self.after:
            if self.how == "sigint":
                os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C mid-step: stops after the step
            else:
                raise RuntimeError("a bug in the model")
        return self.layer(x)


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchwise", *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "COLUMNS": "200"}, timeout=300)


def ledger(folder) -> dict[str, dict]:
    out = cli("runs", str(folder), "--json")
    assert out.returncode == 0, out.stderr
    return {row["name"]: row for row in json.loads(out.stdout)}


@pytest.fixture(scope="module")
def runs_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ledger")
    data = tiny_classification()
    torchwise.fit(nn.Linear(6, 3), data, data, config=quiet_config(train={"epochs": 2}), runs_dir=folder,
                  name="done")
    torchwise.fit(nn.Linear(6, 3), data, data, runs_dir=folder, name="stopped-early", config=quiet_config(
        train={"epochs": 50, "monitor": "val_loss"}, early_stop={"enabled": True, "patience": 1, "min_delta": 10.0}))
    with pytest.raises(RuntimeError):
        torchwise.fit(Crashes(3, "raise"), data, runs_dir=folder, name="crashed",
                      config=quiet_config(train={"epochs": 2}))
    torchwise.fit(Crashes(3, "sigint"), data, runs_dir=folder, name="ctrl-c", config=quiet_config(
        train={"epochs": 2, "batch_size": 10}, optim={"lr": 0.01}))
    return folder


def test_each_ending_shows_as_itself_and_a_sigkilled_run_is_killed_not_running(runs_folder, tmp_path):
    config = tmp_path / "long.yaml"
    config.write_text(KILL_CONFIG)
    process = subprocess.Popen([sys.executable, "-m", "torchwise", "train", str(config), "--run-dir",
                                str(runs_folder), "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    metrics = runs_folder / "long" / "metrics.jsonl"
    try:
        deadline = time.time() + 240
        while (not metrics.is_file() or metrics.stat().st_size == 0) and time.time() < deadline:
            assert process.poll() is None, process.stderr.read().decode()
            time.sleep(0.05)
        assert ledger(runs_folder)["long"]["status"] == "running"  # alive: it holds its lock
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    rows = ledger(runs_folder)
    assert {name: row["status"] for name, row in rows.items()} == {
        "done": "completed", "stopped-early": "early_stopped", "crashed": "failed", "ctrl-c": "interrupted",
        "long": "killed"}
    assert json.loads((runs_folder / "long" / "summary.json").read_text())["status"] == "running"
    assert rows["crashed"]["reason"] == "RuntimeError: a bug in the model"
    # What differs: the model's settings between the YAML run and the Python ones, LR, epochs...
    assert rows["ctrl-c"]["differs"]["optim.lr"] == 0.01 and rows["done"]["differs"]["optim.lr"] == 0.001
    # ... between runs of the same data and model only: the digits run is alone in its family.
    assert (rows["long"]["family"], rows["long"]["differs"]) == ("digits/mlp", {})
    assert rows["done"]["family"] == rows["ctrl-c"]["family"] != "digits/mlp"
    assert rows["done"]["best"]["metric"] == "val_loss" and rows["done"]["epochs"] == 2
    assert rows["long"]["wall_seconds"] is not None

    table = cli("runs", str(runs_folder))
    assert table.returncode == 0, table.stderr
    for name, status in (("done", "completed"), ("long", "killed"), ("ctrl-c", "interrupted")):
        (line,) = [line for line in table.stdout.splitlines() if line.startswith(f"{name} ")]
        assert status in line


def test_compare_diffs_config_and_metrics_and_writes_the_curves(runs_folder, tmp_path):
    out = cli("runs", "compare", str(runs_folder / "done"), str(runs_folder / "ctrl-c"), "--json",
              "--png", str(tmp_path / "c.png"))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["config"]["optim.lr"] == [0.001, 0.01]
    done = json.loads((runs_folder / "done" / "summary.json").read_text())
    assert result["final"]["val_loss"][0] == done["final"]["val_loss"]
    assert result["best"][0]["value"] == done["best"]["value"]
    png = (tmp_path / "c.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    text = cli("runs", "compare", str(runs_folder / "done"), str(runs_folder / "ctrl-c"), cwd=tmp_path)
    assert "optim.lr" in text.stdout and f"curves: {runs_folder / 'compare.png'}" in text.stdout
    assert (runs_folder / "compare.png").is_file() and not (tmp_path / "compare.png").exists()


def test_bad_input_is_an_error_with_a_hint(tmp_path):
    out = cli("runs", "compare", str(tmp_path))
    assert out.returncode == 2 and out.stderr.startswith("error: runs compare needs two or more run folders")
    out = cli("runs", "compare", str(tmp_path), str(tmp_path))
    assert out.returncode == 2 and "is not a run folder" in out.stderr and "hint:" in out.stderr
    out = cli("runs", str(tmp_path / "nowhere"))
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_the_ledger_imports_no_torch_and_no_user_code(runs_folder):
    code = ("import sys; from pathlib import Path; from torchwise.runs.ledger import ledger_rows, compare; "
            f"ledger_rows(Path({str(runs_folder)!r})); "
            f"compare([Path({str(runs_folder / 'done')!r}), Path({str(runs_folder / 'ctrl-c')!r})]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'tests')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
