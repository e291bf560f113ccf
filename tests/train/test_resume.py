"""Exact resume: a run stopped at step k and resumed ends where an uninterrupted run ends."""

from __future__ import annotations

import os
import signal

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from torch import nn

import torchwise
from torchwise.errors import CheckpointError, ResumeError
from torchwise.runs.folder import read_jsonl


class Net(nn.Module):
    """Dropout draws from the global RNG every step, so a resume that loses RNG state shows."""

    def __init__(self, interrupt_after_forward: int | None = None) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 3))
        self.interrupt_after_forward = interrupt_after_forward
        self.forwards = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and torch.is_grad_enabled():  # a training step's forward, not preflight's check
            self.forwards += 1
            if self.forwards == self.interrupt_after_forward:
                os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, in the middle of a step
        return self.body(x)


def config(workers: int) -> dict:
    # 100 samples, micro-batch 8, accumulate 2: 7 steps per epoch, the last window 12 samples.
    return quiet_config(train={"epochs": 3, "batch_size": 8, "accumulate": 2},
                        data={"num_workers": workers}, checkpoint={"enabled": True})


def per_step_losses(run_dir) -> dict[int, float]:
    return {r["step"]: r["loss"] for r in read_jsonl(run_dir / "metrics.jsonl") if r["split"] == "train"}


def reference(tmp_path, workers: int):
    model = Net()
    result = torchwise.fit(model, tiny_classification(), tiny_classification(n=30, seed=1),
                           config=config(workers), runs_dir=tmp_path / "ref")
    return model.state_dict(), per_step_losses(result.run_dir)


def interrupted_then_resumed(tmp_path, workers: int, stop_step: int):
    data, val = tiny_classification(), tiny_classification(n=30, seed=1)
    epoch, index = divmod(stop_step - 1, 7)  # 13 micro-batches per epoch: six windows of 2, one of 1
    first = torchwise.fit(Net(interrupt_after_forward=13 * epoch + 2 * index + 1), data, val,
                          config=config(workers), runs_dir=tmp_path / "stopped")
    assert first.status == "interrupted" and first.summary["steps"] == stop_step
    assert first.summary["reason"] == "stopped by SIGINT"
    model = Net()
    resumed = torchwise.fit(model, data, val, resume=first.run_dir)
    assert resumed.status == "completed" and resumed.summary["steps"] == 21
    return model.state_dict(), per_step_losses(resumed.run_dir)


def assert_same_run(tmp_path, workers: int, stop_step: int) -> None:
    ref_weights, ref_losses = reference(tmp_path, workers)
    weights, losses = interrupted_then_resumed(tmp_path, workers, stop_step)
    assert losses == ref_losses  # every step's loss, bit for bit
    for key in ref_weights:
        assert torch.equal(weights[key], ref_weights[key]), key


@pytest.mark.parametrize("stop_step", [1, 4, 7, 10, 20, 21])  # 7: an epoch's end; 21: the run's last step
def test_resume_is_exact(tmp_path, stop_step):
    assert_same_run(tmp_path, workers=0, stop_step=stop_step)


def test_resume_keeps_the_open_log_window_and_the_epoch_loss(tmp_path):
    """Without validation data the epoch's train loss is the monitored metric: it must survive."""
    cfg = quiet_config(train={"epochs": 2, "batch_size": 8, "accumulate": 2}, log={"every_n_steps": 3},
                       checkpoint={"enabled": True})

    def records(run_dir) -> list[tuple]:
        rows = read_jsonl(run_dir / "metrics.jsonl")
        return [(r["split"], r["step"], r["loss"]) for r in rows if r["split"] in ("train", "train_epoch")]

    reference = torchwise.fit(Net(), tiny_classification(), config=cfg, runs_dir=tmp_path / "ref")
    first = torchwise.fit(Net(interrupt_after_forward=9), tiny_classification(), config=cfg,
                          runs_dir=tmp_path / "stopped")
    assert first.summary["steps"] == 5  # mid log window (3..6) and mid epoch
    resumed = torchwise.fit(Net(), tiny_classification(), resume=first.run_dir)
    assert records(resumed.run_dir) == records(reference.run_dir)
    assert resumed.best == reference.best


@pytest.mark.slow
@pytest.mark.parametrize("stop_step", [3, 7, 11])
def test_resume_is_exact_with_two_workers(tmp_path, stop_step):
    assert_same_run(tmp_path, workers=2, stop_step=stop_step)


def test_resume_refuses_overrides_that_rewrite_history(tmp_path):
    first = torchwise.fit(Net(interrupt_after_forward=3), tiny_classification(), config=config(0),
                          runs_dir=tmp_path)
    with pytest.raises(ResumeError) as err:
        torchwise.fit(Net(), tiny_classification(), resume=first.run_dir, overrides=["optim.lr=0.5"])
    assert "resume cannot change 'optim.lr'" in err.value.message
    extended = torchwise.fit(Net(), tiny_classification(), resume=first.run_dir,
                             overrides=["train.epochs=4", "early_stop.patience=9"])
    assert extended.summary["steps"] == 28 and extended.summary["epochs"] == 4


def test_resume_notices_an_edited_config(tmp_path):
    first = torchwise.fit(Net(interrupt_after_forward=3), tiny_classification(), config=config(0),
                          runs_dir=tmp_path)
    path = first.run_dir / "config.yaml"
    path.write_text(path.read_text().replace("lr: 0.001", "lr: 0.002"))
    with pytest.raises(ResumeError) as err:
        torchwise.fit(Net(), tiny_classification(), resume=first.run_dir)
    assert "the run's config changed since the checkpoint (optim.lr)" in err.value.message


def test_resume_of_another_model_is_refused_before_loading(tmp_path):
    first = torchwise.fit(Net(interrupt_after_forward=3), tiny_classification(), config=config(0),
                          runs_dir=tmp_path)
    other = nn.Sequential(nn.Linear(6, 3))
    with pytest.raises(CheckpointError, match="belongs to another model"):
        torchwise.fit(other, tiny_classification(), resume=first.run_dir)


def test_resume_where_auto_precision_resolves_differently_is_refused(tmp_path, monkeypatch):
    first = torchwise.fit(Net(interrupt_after_forward=3), tiny_classification(), config=config(0),
                          runs_dir=tmp_path)
    from torchwise.train.precision import Precision

    # As if resumed on a GPU where `auto` means bf16: the optimizer state would continue another run.
    monkeypatch.setattr(Precision, "resolve", classmethod(lambda cls, requested, device: cls("bf16", "cpu")))
    with pytest.raises(ResumeError) as err:
        torchwise.fit(Net(), tiny_classification(), resume=first.run_dir)
    assert err.value.message == ("the run trained on cpu in fp32; this machine resolves to cpu in bf16, "
                                 "which would not continue the same run")
