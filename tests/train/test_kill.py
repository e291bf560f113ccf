"""SIGKILL a real training process at random moments, mid-save included: every `last` that
remains verifies, resumes, and the run ends bit-identical to one that was never killed."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from torchwise.checkpoints.checkpoint import load_checkpoint, verify_checkpoint
from torchwise.runs.folder import read_jsonl

CONFIG = """
data: {source: digits, standardize: true}
model: {name: mlp, kwargs: {hidden: [64], dropout: 0.2}}
train: {max_steps: 800, epochs: 1000, batch_size: 32, seed: 5}
checkpoint: {every_n_steps: 1}
log: {every_n_steps: 1, progress: off}
"""


def saved_step(run: Path) -> int:
    try:
        return json.loads((run / "checkpoints" / "last" / "meta.json").read_text())["step"]
    except (OSError, ValueError, KeyError):
        return -1


def torchwise(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "torchwise", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_twenty_kills_at_random_moments(tmp_path):
    rng = random.Random(2026)
    config = tmp_path / "kill.yaml"
    config.write_text(CONFIG)
    reference = subprocess.run([sys.executable, "-m", "torchwise", "train", str(config), "--run-dir",
                                str(tmp_path / "ref"), "-q"], capture_output=True, text=True)
    assert reference.returncode == 0, reference.stderr
    run = tmp_path / "runs" / "kill"

    process = torchwise("train", str(config), "--run-dir", str(tmp_path / "runs"))
    kills, previous = 0, -1
    while kills < 20:
        deadline = time.time() + 120
        while saved_step(run) <= previous and time.time() < deadline:  # wait for progress
            time.sleep(0.01)
        assert process.poll() is None, process.communicate()[1].decode()
        time.sleep(rng.uniform(0, 0.15))  # then a random moment: mid-step or mid-save
        process.send_signal(signal.SIGKILL)
        process.wait()
        kills += 1
        verify_checkpoint(run / "checkpoints" / "last")  # never a broken `last`
        previous = saved_step(run)
        assert 0 < previous < 800
        process = torchwise("resume", str(run))
    assert process.wait(timeout=600) == 0, process.communicate()[1].decode()

    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["steps"] == 800
    events = [e["event"] for e in read_jsonl(run / "events.jsonl")]
    assert events.count("resume") == 20
    killed = load_checkpoint(run / "checkpoints" / "last").model_state
    clean = load_checkpoint(tmp_path / "ref" / "kill" / "checkpoints" / "last").model_state
    for key in clean:
        assert killed[key].equal(clean[key]), key

    def losses(folder: Path) -> dict[int, float]:  # a step logged twice keeps its last value
        return {r["step"]: r["loss"] for r in read_jsonl(folder / "metrics.jsonl") if r["split"] == "train"}

    assert losses(run) == losses(tmp_path / "ref" / "kill")
    leftovers = [p.name for p in (run / "checkpoints").iterdir() if ".tmp-" in p.name]
    assert leftovers == []
