"""Under torchrun (2 processes, gloo on CPU): DDP equals one process at the same global batch,
validation covers the whole set once, and a stopped or broken run resumes to the same weights."""

from __future__ import annotations

import json
import os
import shutil
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


# torchrun's own exit status when it is signalled with its ranks (it raises SignalException).
TORCHRUN_SIGNALLED = 1


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


def resume_under_one_process(run: Path, copy: Path) -> dict[str, torch.Tensor]:
    """Resume a copy of a 2-process run at 16 per process under one plain process (no torchrun):
    refused at batch 16 with the batch size that keeps the global batch, accepted at 32."""
    shutil.copytree(run, copy, symlinks=True)
    refused = single("resume", str(copy))
    assert refused.returncode == 2, refused.stderr
    assert "hint: resume with train.batch_size=32 under 1 process" in refused.stderr
    resumed = single("resume", str(copy), "train.batch_size=32")
    assert resumed.returncode == 0, resumed.stderr
    event = [e for e in read_jsonl(copy / "events.jsonl") if e["event"] == "resume"][-1]
    assert (event["world_size"], event["batch_size"]) == (1, 32)
    assert json.loads((copy / "checkpoints" / "last" / "meta.json").read_text())["world_size"] == 1
    return weights(copy)


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
    # The ranks exit 130; torchrun itself, signalled too, ends by raising its SignalException.
    assert code == TORCHRUN_SIGNALLED and "SignalException" in output, output
    summary = json.loads((runs / "stopped" / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["reason"] == "stopped by SIGINT", output
    assert 10 <= summary["steps"] < 45
    meta = json.loads((runs / "stopped" / "checkpoints" / "last" / "meta.json").read_text())
    assert meta["step"] == summary["steps"]  # both ranks stopped at the step `last` holds
    assert meta["world_size"] == 2
    events = [e["event"] for e in read_jsonl(runs / "stopped" / "events.jsonl")]
    assert events.count("interrupted") == 1  # written once, by rank 0
    whole = weights(runs / "whole")
    # One process at 32 continues the 2-process run at 16: the same global batches, the same order.
    one = resume_under_one_process(runs / "stopped", runs / "stopped-one")
    for key in whole:
        torch.testing.assert_close(one[key], whole[key], rtol=0, atol=1e-6)
    code, output = finish(torchrun(2, "resume", str(runs / "stopped")))
    assert code == 0, output
    resumed = weights(runs / "stopped")
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
    # The consolidated weights: torchwise.load_model builds the run's model and loads them, with no
    # torch.distributed, and predicts as the plain model holding the checkpoint's tensors.
    import torchwise
    from torchwise.models.builtin import mlp

    best = load_file(runs / "whole" / "checkpoints" / "best" / "model.safetensors")
    loaded = torchwise.load_model(runs / "whole")
    assert loaded.state_dict().keys() == best.keys()
    for key, value in loaded.state_dict().items():
        assert torch.equal(value, best[key]), key
    plain = mlp(64, 10, hidden=[32]).eval()
    plain.load_state_dict(best)
    inputs = torch.randn(64, 64, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.equal(loaded(inputs), plain(inputs))
    torch.testing.assert_close(best, whole)  # best is the last epoch here
    # Stopped mid-epoch, resumed from the DCP checkpoint: the same weights as the whole run.
    process = torchrun(2, "train", str(config), "train.distributed=fsdp", "--run-dir", str(runs), "--name", "stopped")
    wait_for_step(runs / "stopped", 10, process)
    os.killpg(process.pid, signal.SIGTERM)
    code, output = finish(process)
    assert code == TORCHRUN_SIGNALLED and "SignalException" in output, output
    summary = json.loads((runs / "stopped" / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["reason"] == "stopped by SIGTERM"
    # Under one plain process (no process group): weights from the consolidated file, the optimizer
    # resharded from the DCP files onto the whole model.
    one = resume_under_one_process(runs / "stopped", runs / "stopped-one")
    for key in whole:
        torch.testing.assert_close(one[key], whole[key], rtol=0, atol=1e-5)
    code, output = finish(torchrun(2, "resume", str(runs / "stopped")))
    assert code == 0, output
    resumed = weights(runs / "stopped")
    for key in whole:
        torch.testing.assert_close(resumed[key], whole[key], rtol=0, atol=1e-6)


# The digits MLP as a model target in the test's folder, which can stop or hang on cue.
SCRIPTED_MODEL = '''
import os
import signal
import time

from torch import nn


class Net(nn.Module):
    """TEST_SIGTERM_AT=N: the N-th forward sends its own process SIGTERM (the step still ends);
    TEST_HANG_AT=N (TEST_HANG_EVAL_AT=N): on rank 1 the N-th forward (in eval mode) does not return
    for an hour."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
        self.calls = 0
        self.eval_calls = 0

    def forward(self, x):
        self.calls += 1
        self.eval_calls += not self.training
        if self.calls == int(os.environ.get("TEST_SIGTERM_AT", 0)):
            os.kill(os.getpid(), signal.SIGTERM)
        # only where asked: unset means never (0 eval forwards is where the first train-mode one is)
        hang_at, hang_eval_at = int(os.environ.get("TEST_HANG_AT", 0)), int(os.environ.get("TEST_HANG_EVAL_AT", 0))
        if os.environ.get("RANK") == "1" and ((hang_at and self.calls == hang_at)
                                              or (hang_eval_at and self.eval_calls == hang_eval_at)):
            time.sleep(3600)
        return self.layers(x)
'''


def scripted_config(tmp_path: Path) -> Path:
    (tmp_path / "scripted_model.py").write_text(SCRIPTED_MODEL)
    config = tmp_path / "scripted.yaml"
    config.write_text(CONFIG.replace("model: {name: mlp, kwargs: {hidden: [32]}}",
                                     "model: {target: 'scripted_model:Net'}"))
    return config


def test_a_one_process_checkpoint_resumes_under_two_fsdp_processes(tmp_path):
    # One plain process at 32 writes a plain checkpoint (the optimizer state whole, by number);
    # 2 FSDP processes at 16 shard it onto their ranks and continue the same global batches.
    config = scripted_config(tmp_path)
    runs = tmp_path / "runs"
    args = ("train", str(config), "train.distributed=fsdp", "train.batch_size=32", "--run-dir", str(runs))
    whole = single(*args, "--name", "whole")
    assert whole.returncode == 0, whole.stderr
    stopped = subprocess.run([sys.executable, "-m", "torchwise", *args, "--name", "stopped"], capture_output=True,
                             text=True, timeout=300, env={**os.environ, "TEST_SIGTERM_AT": "20"})
    assert stopped.returncode == 143, stopped.stderr
    meta = json.loads((runs / "stopped" / "checkpoints" / "last" / "meta.json").read_text())
    assert meta["world_size"] == 1 and "sharded" not in meta and 10 <= meta["step"] < 45  # mid-epoch
    code, output = finish(torchrun(2, "resume", str(runs / "stopped"), "train.batch_size=16"))
    assert code == 0, output
    resumed, reference = weights(runs / "stopped"), weights(runs / "whole")
    for key in reference:
        torch.testing.assert_close(resumed[key], reference[key], rtol=0, atol=1e-5)
    last = runs / "stopped" / "checkpoints" / "last"
    assert {".metadata", "__0_0.distcp", "__1_0.distcp"} <= {p.name for p in last.iterdir()}


@pytest.mark.parametrize(("kind", "hang", "waiting_in"), [
    ("ddp", "TEST_HANG_AT", "DDP's gradient all-reduce (backward)"),
    ("fsdp", "TEST_HANG_AT", "FSDP's parameter gathers and gradient reduce-scatter (forward/backward)"),
    ("fsdp", "TEST_HANG_EVAL_AT", "FSDP's parameter gathers (validation forward)")])
def test_a_hung_rank_fails_the_run_in_bounded_time_naming_the_rank(tmp_path, kind, hang, waiting_in):
    # Rank 1 hangs in a forward (training's 10th, or validation's 5th); rank 0 then waits in torch's
    # code, not ours (DDP's gradient all-reduce inside backward, FSDP's parameter all-gather inside
    # forward) until train.collective_timeout_s ends it with an error of ours.
    config = scripted_config(tmp_path)
    started = time.monotonic()
    cue = "10" if hang == "TEST_HANG_AT" else "5"
    process = torchrun(2, "train", str(config), f"train.distributed={kind}", "train.collective_timeout_s=5",
                       "--run-dir", str(tmp_path / "runs"), "--name", "hang", env={**os.environ, hang: cue})
    try:
        code, output = finish(process, timeout=600)  # the hang lasts 3600 s
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise AssertionError(f"the hung run did not end within 600 s: {process.communicate()}") from None
    elapsed = time.monotonic() - started
    assert code != 0, output
    assert f"error: rank 0/2: {waiting_in} did not complete" in output, output
    assert "hint: another rank failed or hung (collectives time out after 5 s, train.collective_timeout_s)" \
        in output, output
    summary = json.loads((tmp_path / "runs" / "hang" / "summary.json").read_text())
    print(f"a rank hung for an hour: rank 0 failed after {summary['wall_seconds']} s of its run, "
          f"torchrun exited {code} after {elapsed:.1f} s")
    assert summary["status"] == "failed" and summary["reason"].startswith(f"rank 0/2: {waiting_in}")
