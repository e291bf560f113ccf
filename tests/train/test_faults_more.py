"""Fault paths found in review: fp16 skips, odd OOM splits, a second Ctrl-C, a signal on an
epoch's last step."""

from __future__ import annotations

import json
import os
import signal

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from tests.train.test_faults import NeedsSmallBatches, exploding_model, poisoned_data
from torch import nn

import torchwise
from torchwise.runs.folder import read_jsonl
from torchwise.train.precision import Precision


def test_fp16_scaler_survives_skipped_steps(tmp_path, monkeypatch):
    # CPU stands in for CUDA: an enabled GradScaler takes the fp16 path of the loop.
    monkeypatch.setattr(Precision, "resolve", classmethod(lambda cls, requested, device: cls("fp16", "cpu")))
    monkeypatch.setattr(Precision, "autocast", lambda self: torch.autocast("cpu", enabled=False))
    cfg = quiet_config(train={"batch_size": 8, "epochs": 2, "on_nonfinite": "skip"}, data={"shuffle": False})
    result = torchwise.fit(exploding_model(), poisoned_data(), config=cfg, runs_dir=tmp_path)
    assert result.status == "completed" and result.summary["nonfinite_skips"] == 2


def test_out_of_memory_with_an_odd_micro_batch_keeps_the_plan(tmp_path):
    cfg = quiet_config(train={"batch_size": 5, "epochs": 1})
    result = torchwise.fit(NeedsSmallBatches(limit=3), tiny_classification(), config=cfg, runs_dir=tmp_path)
    assert result.summary["steps"] == 20 and result.summary["samples"] == 100
    (retry,) = [e for e in read_jsonl(result.run_dir / "events.jsonl") if e["event"] == "oom_retry"]
    assert retry["micro_batch"] == [5, 3] and retry["effective_batch"] == 5


class TwoSignals(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(6, 3)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.training and self.calls == 5:
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)  # the user means it
        return self.net(x)


def test_a_second_ctrl_c_stops_at_once_and_says_so(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        torchwise.fit(TwoSignals(), tiny_classification(), config=quiet_config(train={"batch_size": 8}),
                      runs_dir=tmp_path)
    (run,) = tmp_path.iterdir()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert summary["reason"] == "stopped by a second signal mid-step; last not updated"


def test_fit_takes_a_dataloader_with_its_own_collate_and_drop_last(tmp_path):
    class Dicts(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return 100

        def __getitem__(self, i: int) -> dict:
            x, y = tiny_classification()[i]
            return {"features": x, "label": y}

    def collate(samples: list[dict]) -> tuple[torch.Tensor, torch.Tensor]:
        return (torch.stack([s["features"] for s in samples]), torch.stack([s["label"] for s in samples]))

    loader = torch.utils.data.DataLoader(Dicts(), batch_size=16, drop_last=True, collate_fn=collate)
    cfg = quiet_config(train={"epochs": 2})
    result = torchwise.fit(nn.Linear(6, 3), loader, config=cfg, runs_dir=tmp_path)
    assert result.status == "completed" and result.summary["steps"] == 12  # 6 full batches per epoch
    lrs = [r["lr"] for r in read_jsonl(result.run_dir / "metrics.jsonl") if r["split"] == "train"]
    assert lrs[-1] < 0.05 * max(lrs)  # the cosine reached its end: the plan counted real batches


def test_integer_valued_float_labels_and_1d_regression_targets(tmp_path):
    import numpy as np

    x = np.random.default_rng(0).random((40, 3)).astype("float32")
    np.savez(tmp_path / "cls.npz", x=x, y=(np.arange(40) % 3).astype("float32"))
    np.savez(tmp_path / "reg.npz", x=x, y=x.sum(1))  # y shaped [40]
    from torchwise.config import load_config
    from torchwise.train.run import run_training

    for name, task in (("cls", "classification"), ("reg", "regression")):
        cfg = load_config(None, ["data.source=npz", f"data.path={tmp_path / (name + '.npz')}",
                                 f"task.type={task}", "train.epochs=1", "log.progress=off"])
        assert run_training(cfg, runs_dir=tmp_path / "runs").status == "completed"


def test_resuming_a_fit_run_from_the_cli_points_back_to_python(tmp_path, capsys):
    from torchwise.cli import main

    cfg = quiet_config(train={"epochs": 1}, checkpoint={"enabled": True})
    result = torchwise.fit(nn.Linear(6, 3), tiny_classification(), config=cfg, runs_dir=tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["resume", str(result.run_dir), "train.epochs=2"])
    assert exit_.value.code == 2
    assert "hint: resume it from Python: torchwise.fit(model, train_data, resume=RUN_DIR)" in capsys.readouterr().err
