"""Faults a run survives or explains: non-finite steps, out of memory, Ctrl-C and SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import OrderedDict
from pathlib import Path

import pytest
import torch
from tests.helpers import quiet_config, step_losses, tiny_classification
from torch import nn
from torch.utils.data import TensorDataset

import torchwise
from torchwise.checkpoints.checkpoint import verify_checkpoint
from torchwise.errors import RunFailed
from torchwise.runs.folder import read_jsonl


class Explode(nn.Module):
    """Turns a poisoned sample (|x| > 100) into inf: the layer a user would have to find."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x.abs() > 100, torch.full_like(x, float("inf")), x)


def exploding_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(OrderedDict(encoder=nn.Linear(6, 16), explode=Explode(), head=nn.Linear(16, 3)))


def poisoned_data() -> TensorDataset:
    data = tiny_classification()
    x = data.tensors[0].clone()
    x[45] = 1e4  # in the 6th batch of 8 when not shuffled: step 5 (0-based)
    return TensorDataset(x, data.tensors[1])


def test_nonfinite_step_names_the_first_module_that_went_nonfinite(tmp_path):
    cfg = quiet_config(train={"batch_size": 8}, data={"shuffle": False})
    with pytest.raises(RunFailed) as err:
        torchwise.fit(exploding_model(), poisoned_data(), config=cfg, runs_dir=tmp_path)
    assert err.value.message == ("non-finite loss or gradient at step 5: first non-finite output in "
                                 "module 'explode'")
    (run,) = tmp_path.iterdir()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["steps"] == 5
    event = [e for e in read_jsonl(run / "events.jsonl") if e["event"] == "nonfinite"][0]
    assert event["module"] == "explode" and event["step"] == 5


def test_nonfinite_loss_from_finite_outputs_blames_the_loss_not_the_gradient(tmp_path):
    def log_of_zero(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.log(logits.softmax(-1) * 0).mean()  # -inf, however finite the logits

    cfg = quiet_config(train={"batch_size": 8}, data={"shuffle": False})
    with pytest.raises(RunFailed) as err:
        torchwise.fit(exploding_model(), tiny_classification(), config=cfg, loss=log_of_zero, runs_dir=tmp_path)
    assert err.value.message == ("non-finite loss or gradient at step 0: first non-finite output in "
                                 "no module's forward output (the loss computation made it)")


def test_on_nonfinite_skip_skips_and_counts(tmp_path):
    cfg = quiet_config(train={"batch_size": 8, "epochs": 2, "on_nonfinite": "skip"}, data={"shuffle": False})
    result = torchwise.fit(exploding_model(), poisoned_data(), config=cfg, runs_dir=tmp_path)
    assert result.status == "completed" and result.summary["nonfinite_skips"] == 2  # once per epoch
    losses = step_losses(result.run_dir)
    assert len(losses) == 26 and all(v == v for v in losses)  # 13 steps x 2; the skipped log 0 loss
    limited = quiet_config(train={"batch_size": 8, "epochs": 3, "on_nonfinite": "skip",
                                  "max_nonfinite_skips": 2}, data={"shuffle": False})
    with pytest.raises(RunFailed, match="2 steps had a non-finite loss or gradient"):
        torchwise.fit(exploding_model(), poisoned_data(), config=limited, runs_dir=tmp_path)


class NeedsSmallBatches(nn.Module):
    """Raises torch.OutOfMemoryError, as CUDA would, for micro-batches above ``limit`` samples."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        self.limit = limit

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and len(x) > self.limit:
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {len(x)} MiB")
        return self.net(x)


def test_out_of_memory_halves_the_micro_batch_and_keeps_the_effective_batch(tmp_path):
    cfg = quiet_config(train={"batch_size": 32, "epochs": 2})
    model = NeedsSmallBatches(limit=8)
    result = torchwise.fit(model, tiny_classification(), config=cfg, runs_dir=tmp_path, name="oom")
    assert result.status == "completed"
    retries = [e for e in read_jsonl(result.run_dir / "events.jsonl") if e["event"] == "oom_retry"]
    assert [(e["micro_batch"], e["accumulate"], e["effective_batch"]) for e in retries] == [
        ([32, 16], [1, 2], 32), ([16, 8], [2, 4], 32)]

    planned = NeedsSmallBatches(limit=8)
    small = quiet_config(train={"batch_size": 8, "accumulate": 4, "epochs": 2})
    expected = torchwise.fit(planned, tiny_classification(), config=small, runs_dir=tmp_path, name="planned")
    assert step_losses(result.run_dir) == step_losses(expected.run_dir)
    for key, value in planned.state_dict().items():
        assert torch.equal(model.state_dict()[key], value), key


def test_out_of_memory_at_micro_batch_one_fails_clearly(tmp_path):
    with pytest.raises(RunFailed) as err:
        torchwise.fit(NeedsSmallBatches(limit=0), tiny_classification(), config=quiet_config(),
                      runs_dir=tmp_path)
    assert err.value.message == "out of memory at step 0 even with a micro-batch of 1 sample"


LONG_RUN = """
data: {source: digits}
train: {epochs: 1000, batch_size: 16}
checkpoint: {every_n_steps: 5}
log: {every_n_steps: 5, progress: plain}
"""


def start_long_run(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, Path]:
    config = tmp_path / "long.yaml"
    config.write_text(LONG_RUN)
    process = subprocess.Popen([sys.executable, "-m", "torchwise", "train", str(config), "--run-dir",
                                str(tmp_path / "runs"), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run = tmp_path / "runs" / "long"
    deadline = time.time() + 60
    while time.time() < deadline:
        if (run / "metrics.jsonl").exists() and (run / "metrics.jsonl").stat().st_size > 0:
            return process, run
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"the run did not start: {process.communicate()}")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_finishes_the_step_writes_last_and_exits(tmp_path, sig, code):
    process, run = start_long_run(tmp_path)
    process.send_signal(sig)
    assert process.wait(timeout=60) == code
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert summary["reason"] == f"stopped by {signal.Signals(sig).name}"
    verify_checkpoint(run / "checkpoints" / "last")
    meta = json.loads((run / "checkpoints" / "last" / "meta.json").read_text())
    assert meta["step"] == summary["steps"]  # `last` is the step the run stopped at
