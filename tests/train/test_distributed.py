"""Under torchrun (2 processes, gloo on CPU): DDP equals one process at the same global batch,
validation covers the whole set once, and a stopped or broken run resumes to the same weights."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from torchwise.runs.folder import read_jsonl

pytestmark = pytest.mark.distributed

CONFIG = """
name: digits
data: {source: digits, val_fraction: 0.2, standardize: true}
model: {name: mlp, kwargs: {hidden: [32]}}
optim: {name: adamw, lr: 0.003}
train: {epochs: 2, batch_size: 16, seed: 0, monitor: val_accuracy}
log: {progress: plain, every_n_steps: 1}
"""


def write_config(tmp_path: Path) -> Path:
    path = tmp_path / "digits.yaml"
    path.write_text(CONFIG)
    return path


def torchrun(nproc: int, *args: str, **popen) -> subprocess.Popen:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc),
               "-m", "torchwise", *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **popen)


def finish(process: subprocess.Popen, timeout: float = 300) -> tuple[int, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out + err


def single(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchwise", *args], capture_output=True, text=True, timeout=300)


def weights(run: Path) -> dict[str, torch.Tensor]:
    return load_file(run / "checkpoints" / "last" / "model.safetensors")


def val_records(run: Path) -> list[dict]:
    return [r for r in read_jsonl(run / "metrics.jsonl") if r["split"] == "val"]


@pytest.mark.parametrize("accumulate", [1, 2])
def test_two_process_ddp_equals_one_process_at_the_same_global_batch(tmp_path, accumulate):
    config = write_config(tmp_path)
    runs = tmp_path / "runs"
    code, output = finish(torchrun(2, "train", str(config), f"train.accumulate={accumulate}",
                                   "--run-dir", str(runs), "--name", "two"))
    assert code == 0, output
    one = single("train", str(config), "train.batch_size=32", f"train.accumulate={accumulate}",
                 "--run-dir", str(runs), "--name", "one")
    assert one.returncode == 0, one.stderr
    two_weights, one_weights = weights(runs / "two"), weights(runs / "one")
    for key in one_weights:
        torch.testing.assert_close(two_weights[key], one_weights[key], rtol=0, atol=1e-6)
    # Validation: both shards reduced, nothing counted twice: the one-process figures.
    two_val, one_val = val_records(runs / "two"), val_records(runs / "one")
    assert [r["accuracy"] for r in two_val] == [r["accuracy"] for r in one_val]
    assert [r["loss"] for r in two_val] == pytest.approx([r["loss"] for r in one_val], abs=1e-6)
    # Rank 0 alone wrote the folder: one table printed, one line per step, world size recorded.
    assert output.count("run two: completed") == 1
    steps = [r["step"] for r in read_jsonl(runs / "two" / "metrics.jsonl") if r["split"] == "train"]
    assert steps == list(range(1, len(steps) + 1))
    env = json.loads((runs / "two" / "env.json").read_text())
    assert (env["world_size"], env["backend"], env["distributed"]) == (2, "gloo", "ddp")


def wait_for_step(run: Path, step: int, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    metrics = run / "metrics.jsonl"
    while time.time() < deadline:
        if metrics.exists() and any(r["split"] == "train" and r["step"] >= step for r in read_jsonl(metrics)):
            return
        if process.poll() is not None:
            raise AssertionError(f"the run ended early: {process.communicate()}")
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    raise AssertionError(f"the run did not reach step {step}: {process.communicate()}")


def test_sigint_mid_epoch_then_resume_under_two_processes_equals_the_uninterrupted_run(tmp_path):
    config = write_config(tmp_path)
    runs = tmp_path / "runs"
    code, output = finish(torchrun(2, "train", str(config), "--run-dir", str(runs), "--name", "whole"))
    assert code == 0, output
    process = torchrun(2, "train", str(config), "--run-dir", str(runs), "--name", "stopped")
    wait_for_step(runs / "stopped", 10, process)  # epoch 1 has 45 steps: this is mid-epoch
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C in a terminal: torchrun and every rank
    code, output = finish(process)
    summary = json.loads((runs / "stopped" / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["reason"] == "stopped by SIGINT", output
    assert 10 <= summary["steps"] < 45
    meta = json.loads((runs / "stopped" / "checkpoints" / "last" / "meta.json").read_text())
    assert meta["step"] == summary["steps"]  # both ranks stopped at the step `last` holds
    events = [e["event"] for e in read_jsonl(runs / "stopped" / "events.jsonl")]
    assert events.count("interrupted") == 1  # written once, by rank 0
    code, output = finish(torchrun(2, "resume", str(runs / "stopped")))
    assert code == 0, output
    resumed, whole = weights(runs / "stopped"), weights(runs / "whole")
    for key in whole:
        assert torch.equal(resumed[key], whole[key]), key


def test_a_killed_rank_stops_the_run_and_resume_completes(tmp_path):
    config = write_config(tmp_path)
    runs = tmp_path / "runs"
    process = torchrun(2, "train", str(config), "checkpoint.every_n_steps=5", "--run-dir", str(runs),
                       "--name", "broken")
    wait_for_step(runs / "broken", 12, process)
    ranks = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
    assert len(ranks) == 2, ranks
    os.kill(int(ranks[-1]), signal.SIGKILL)
    code, output = finish(process)
    assert code != 0  # torchrun saw a rank die and stopped the other
    last_step = json.loads((runs / "broken" / "checkpoints" / "last" / "meta.json").read_text())["step"]
    assert last_step >= 10 and last_step % 5 == 0
    code, output = finish(torchrun(2, "resume", str(runs / "broken")))
    assert code == 0, output
    summary = json.loads((runs / "broken" / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["steps"] == 90


def test_fsdp_two_processes_equal_one_process_resume_through_dcp_and_load_consolidated(tmp_path):
    config = write_config(tmp_path)
    runs = tmp_path / "runs"
    code, output = finish(torchrun(2, "train", str(config), "train.distributed=fsdp", "--run-dir", str(runs),
                                   "--name", "whole"))
    assert code == 0, output
    one = single("train", str(config), "train.batch_size=32", "--run-dir", str(runs), "--name", "one")
    assert one.returncode == 0, one.stderr
    whole, reference = weights(runs / "whole"), weights(runs / "one")
    for key in reference:
        torch.testing.assert_close(whole[key], reference[key], rtol=0, atol=1e-5)
    last = runs / "whole" / "checkpoints" / "last"
    assert {".metadata", "__0_0.distcp", "__1_0.distcp", "meta.json"} <= {p.name for p in last.iterdir()}
    # The consolidated weights are a plain state dict: the model loads them without torch.distributed.
    from torchwise.checkpoints.checkpoint import load_checkpoint
    from torchwise.models.builtin import mlp

    model = mlp(64, 10, hidden=[32])
    model.load_state_dict(load_checkpoint(runs / "whole" / "checkpoints" / "best").model_state)
    torch.testing.assert_close(model.state_dict(), weights(runs / "whole"))  # best is the last epoch here
    # Stopped mid-epoch, resumed from the DCP checkpoint: the same weights as the whole run.
    process = torchrun(2, "train", str(config), "train.distributed=fsdp", "--run-dir", str(runs), "--name", "stopped")
    wait_for_step(runs / "stopped", 10, process)
    os.killpg(process.pid, signal.SIGTERM)
    finish(process)
    summary = json.loads((runs / "stopped" / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["reason"] == "stopped by SIGTERM"
    code, output = finish(torchrun(2, "resume", str(runs / "stopped")))
    assert code == 0, output
    resumed = weights(runs / "stopped")
    for key in whole:
        torch.testing.assert_close(resumed[key], whole[key], rtol=0, atol=1e-6)
