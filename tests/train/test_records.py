"""A run's record stays true across resumes: an idle resume changes nothing, steps logged by a
killed process are superseded, and an extended run says its new length and keeps its LR down."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from torchwise.cli import main
from torchwise.diagnose.run_diagnosis import diagnose_run
from torchwise.runs.folder import read_jsonl
from torchwise.runs.reader import read_run

CONFIG = """
name: rec
data: {source: digits, val_fraction: 0.2, standardize: true}
model: {name: mlp, kwargs: {hidden: [16]}}
optim: {name: adamw, lr: 0.01}
schedule: {name: warmup-cosine, warmup_steps: 5, min_lr_ratio: 0.1}
train: {epochs: 2, batch_size: 128, seed: 0}
log: {progress: off, every_n_steps: 1}
"""


def folder_bytes(folder: Path) -> dict[str, bytes | str]:
    """Every file's bytes and every link's target, by path inside the folder."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = str(path.readlink())
        elif path.is_file():
            found[name] = path.read_bytes()
    return found


@pytest.fixture
def finished_run(tmp_path: Path) -> Path:
    config = tmp_path / "rec.yaml"
    config.write_text(CONFIG)
    with pytest.raises(SystemExit) as end:
        main(["train", str(config), "--run-dir", str(tmp_path / "runs"), "-q"])
    assert end.value.code == 0
    return tmp_path / "runs" / "rec"


def resume(*args: str) -> int:
    with pytest.raises(SystemExit) as end:
        main(["resume", *args, "-q"])
    return end.value.code


def test_a_resume_with_nothing_left_to_train_leaves_the_folder_byte_for_byte(finished_run):
    before = folder_bytes(finished_run)
    assert resume(str(finished_run)) == 0
    after = folder_bytes(finished_run)
    assert sorted(after) == sorted(before)
    assert [name for name in before if before[name] != after[name]] == []


def test_an_extended_run_records_its_new_length_and_its_lr_never_rises(finished_run):
    assert resume(str(finished_run), "train.epochs=4") == 0
    config = yaml.safe_load((finished_run / "config.yaml").read_text())
    assert config["train"]["epochs"] == 4
    changed = [e for e in read_jsonl(finished_run / "events.jsonl") if e["event"] == "config_changed"]
    assert [(e["step"], e["changes"]) for e in changed] == [(24, {"train.epochs": [2, 4]})]
    respanned = [e for e in read_jsonl(finished_run / "events.jsonl") if e["event"] == "schedule_respanned"]
    assert [(e["from_step"], e["planned_steps"]) for e in respanned] == [(24, [24, 48])]
    lrs = [r["lr"] for r in read_run(finished_run).metrics if r["split"] == "train"]
    assert len(lrs) == 48  # 12 steps an epoch (1437 samples at 128), 4 epochs
    # The first segment warmed up over 5 steps, then decayed to its floor (0.1 x 0.01) at step 24;
    # the extension goes on from that LR with no second warmup: after the warmup the LR only falls.
    assert lrs[:5] == pytest.approx([0.002, 0.004, 0.006, 0.008, 0.01])
    assert all(later <= earlier for earlier, later in zip(lrs[4:], lrs[5:], strict=False))
    assert lrs[23] == pytest.approx(0.001 + 0.009 * 0.5 * (1 + math.cos(math.pi * 18 / 19)))
    assert lrs[24:] == pytest.approx([0.001] * 24)


# A model that takes 10 ms a training step, so a kill lands between two checkpoints.
SLOW_MODEL = '''
import time
from torch import nn


class Slow(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 10))

    def forward(self, x):
        if self.training:
            time.sleep(0.01)
        return self.body(x)
'''


def test_after_kill_9_and_resume_every_reader_sees_each_step_once(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW_MODEL)
    config = tmp_path / "rec.yaml"
    config.write_text(CONFIG.replace("{name: mlp, kwargs: {hidden: [16]}}", '{target: "slow:Slow"}')
                      .replace("batch_size: 128", "batch_size: 32"))
    run = tmp_path / "runs" / "rec"
    command = [sys.executable, "-m", "torchwise", "train", str(config), "--run-dir", str(tmp_path / "runs"), "-q"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline:  # epoch 1 ends at step 45 with a checkpoint; kill in epoch 2
        lines = read_jsonl(run / "metrics.jsonl") if (run / "metrics.jsonl").is_file() else []
        if any(r["split"] == "train" and r["step"] >= 50 for r in lines):
            break
        assert process.poll() is None, process.communicate()[1].decode()
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    raw = [r["step"] for r in read_jsonl(run / "metrics.jsonl") if r["split"] == "train"]
    saved = json.loads((run / "checkpoints" / "last" / "meta.json").read_text())["step"]
    assert saved == 45 and max(raw) >= 50
    assert resume(str(run)) == 0

    logged = [r["step"] for r in read_jsonl(run / "metrics.jsonl") if r["split"] == "train"]
    assert len(logged) > len(set(logged))  # the file keeps what the killed process wrote ...
    record = read_run(run)  # ... and every reader (runs, diagnose, report) reads it through read_run
    assert [r["step"] for r in record.metrics if r["split"] == "train"] == list(range(1, 91))
    assert [r["step"] for r in record.metrics if r["split"] == "val"] == [45, 90]
    assert record.series("train", "loss")[0] == list(range(1, 91))
    assert diagnose_run(run).to_json()["findings"] is not None


# A model that takes 3 s to build, and says when it starts: a signal then lands in start-up.
SLOW_START_MODEL = '''
import time
from pathlib import Path
from torch import nn


class Net(nn.Sequential):
    def __init__(self):
        Path(__file__).with_name("building").touch()
        time.sleep(3)
        super().__init__(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 10))
'''


def start_slowly(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    (tmp_path / "slowstart.py").write_text(SLOW_START_MODEL)
    config = tmp_path / "rec.yaml"
    config.write_text(CONFIG.replace("{name: mlp, kwargs: {hidden: [16]}}", '{target: "slowstart:Net"}'))
    command = [sys.executable, "-m", "torchwise", "train", str(config), "--run-dir", str(tmp_path / "runs"), "-q"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (tmp_path / "building").is_file():
        assert process.poll() is None and time.time() < deadline, process.communicate()
        time.sleep(0.01)
    return process, tmp_path / "runs" / "rec"


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_start_up_records_interrupted_with_the_reason(tmp_path, sig, code):
    process, run = start_slowly(tmp_path)
    process.send_signal(sig)
    out, err = process.communicate(timeout=120)
    assert process.returncode == code, err
    assert "Traceback" not in err and "Aborted" not in err, err
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["status"], summary["steps"]) == ("interrupted", 0)
    assert summary["reason"] == f"stopped by {sig.name} during start-up, before the first step"
    assert read_run(run).status == "interrupted"


def test_a_run_killed_during_start_up_reads_as_killed_never_running(tmp_path, capsys):
    process, run = start_slowly(tmp_path)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert json.loads((run / "summary.json").read_text())["status"] == "running"  # it could not say more
    assert read_run(run).status == "killed"
    (run / "summary.json").unlink()  # killed before its first summary: still killed, not "unknown"
    assert read_run(run).status == "killed"
    with pytest.raises(SystemExit) as end:
        main(["runs", str(tmp_path / "runs"), "--json"])
    assert end.value.code in (None, 0)
    assert [row["status"] for row in json.loads(capsys.readouterr().out)] == ["killed"]
