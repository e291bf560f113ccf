"""A refused resume changes nothing; an early-stopped run resumed says what happens and goes on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from torch import nn

import torchwise
from torchwise.errors import ConfigError, ResumeError, WeightsMismatch
from torchwise.runs.folder import read_jsonl


def mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def folder_bytes(folder: Path) -> dict[str, bytes | str]:
    """Every file's bytes and every link's target, under the whole folder."""
    seen: dict[str, bytes | str] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            key = str(path.relative_to(folder))
            if path.is_symlink():
                seen[key] = "-> " + os.readlink(path)
            elif path.is_file():
                seen[key] = path.read_bytes()
    return seen


def finished_run(tmp_path: Path, **sections) -> Path:
    config = quiet_config(train={"epochs": 2}, checkpoint={"enabled": True}, **sections)
    result = torchwise.fit(mlp(), tiny_classification(), tiny_classification(seed=1), config=config,
                           runs_dir=tmp_path)
    assert result.status in ("completed", "early_stopped")
    return result.run_dir


def test_a_refused_resume_changes_nothing_in_the_run_folder(tmp_path: Path) -> None:
    run = finished_run(tmp_path)
    before = folder_bytes(run)
    assert b'"status": "completed"' in before["summary.json"]
    with pytest.raises(WeightsMismatch, match="belongs to another model"):
        torchwise.fit(nn.Linear(6, 3), tiny_classification(), tiny_classification(seed=1), resume=run)
    with pytest.raises(ResumeError, match="resume cannot change 'optim.lr'"):
        torchwise.fit(mlp(), tiny_classification(), resume=run, overrides=["optim.lr=0.5"])
    assert folder_bytes(run) == before


def test_a_resume_refused_by_the_preflight_changes_nothing(tmp_path: Path) -> None:
    from torchwise.errors import TorchwiseError

    run = finished_run(tmp_path)
    before = folder_bytes(run)
    wider = tiny_classification(features=7)  # the model takes 6 features
    with pytest.raises(TorchwiseError) as error:
        torchwise.fit(mlp(), wider, tiny_classification(seed=1), resume=run)
    assert "7" in error.value.message
    assert folder_bytes(run) == before


def test_fit_refuses_a_config_next_to_resume(tmp_path: Path) -> None:
    run = finished_run(tmp_path)
    with pytest.raises(ConfigError) as error:
        torchwise.fit(mlp(), tiny_classification(), resume=run, config={"train": {"epochs": 5}})
    assert error.value.message == ("fit(resume=...) continues the run with its own config.yaml; "
                                   "config would be ignored")
    assert "overrides=['train.epochs=40', 'early_stop.patience=10']" in error.value.hint


def test_an_early_stopped_run_resumed_longer_gets_a_fresh_patience(tmp_path: Path, capsys) -> None:
    # lr so small and min_delta so large that no evaluation after the first counts as better
    sections = {"optim": {"lr": 1e-9}, "early_stop": {"enabled": True, "patience": 2, "min_delta": 1.0},
                "log": {"progress": "plain"}}
    config = quiet_config(train={"epochs": 10}, checkpoint={"enabled": True}, **sections)
    first = torchwise.fit(mlp(), tiny_classification(), tiny_classification(seed=1), config=config,
                          runs_dir=tmp_path)
    assert first.status == "early_stopped" and first.summary["epochs"] == 3
    capsys.readouterr()
    again = torchwise.fit(mlp(), tiny_classification(), tiny_classification(seed=1), resume=first.run_dir,
                          overrides=["train.epochs=20"])
    # before: one more epoch and stop again; now: `patience` more evaluations without improvement
    assert again.status == "early_stopped" and again.summary["epochs"] == 5
    said = capsys.readouterr()
    assert ("this run stopped early: val_loss had not improved for 2 evaluations; it goes on with a fresh "
            "patience of 2 evaluations (raise early_stop.patience to wait longer, or set "
            "early_stop.enabled=false to train every epoch)") in said.out + said.err
    (event,) = [e for e in read_jsonl(again.run_dir / "events.jsonl") if e["event"] == "early_stop_reset"]
    assert event["bad_evals"] == 2 and event["patience"] == 2

    longer = torchwise.fit(mlp(), tiny_classification(), tiny_classification(seed=1), resume=first.run_dir,
                           overrides=["train.epochs=20", "early_stop.patience=4"])
    assert longer.summary["epochs"] == 7  # 2 bad evaluations so far, 2 more to reach 4
