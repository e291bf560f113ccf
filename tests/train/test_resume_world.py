"""Resume under another number of processes: accepted exactly when the global batch
(train.batch_size x processes) is the one the checkpoint trained at, refused with the batch size
that keeps it otherwise. The runs themselves (2 processes resumed under 1) are in
test_distributed.py; here the decision, without a process group."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from torch import nn

import torchwise
from torchwise.cli import main
from torchwise.config import RunConfig
from torchwise.errors import ResumeError
from torchwise.train.checkpointer import Checkpointer
from torchwise.train.distributed import process_count
from torchwise.train.resume import check_config_unchanged, load_run_config


def under_torchrun(monkeypatch: pytest.MonkeyPatch, world: int) -> None:
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", str(world))


def saved_meta(tmp_path: Path, *, world: int, batch_size: int = 16) -> dict:
    """What a checkpoint of `world` processes at `batch_size` each records about its run."""
    cfg = RunConfig(train={"batch_size": batch_size})
    return dict(Checkpointer(cfg, directory=tmp_path / "checkpoints", world=world).identity)


def refusal(cfg: RunConfig, meta: dict, *, world: int) -> ResumeError:
    with pytest.raises(ResumeError) as err:
        check_config_unchanged(cfg, meta, world=world)
    return err.value


def test_the_process_count_is_torchruns_world_size_unless_distributed_is_none(monkeypatch):
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(key, raising=False)
    assert process_count(RunConfig()) == 1
    under_torchrun(monkeypatch, 4)
    assert process_count(RunConfig()) == 4
    assert process_count(RunConfig(train={"distributed": "fsdp"})) == 4
    assert process_count(RunConfig(train={"distributed": "none"})) == 1  # each process is a run of its own


def test_a_checkpoint_records_its_world_size(tmp_path):
    assert saved_meta(tmp_path, world=2)["world_size"] == 2
    assert saved_meta(tmp_path, world=1)["world_size"] == 1


def test_another_process_count_at_the_same_global_batch_is_accepted(tmp_path):
    meta = saved_meta(tmp_path, world=2, batch_size=16)
    check_config_unchanged(RunConfig(train={"batch_size": 16}), meta, world=2)  # as it trained
    check_config_unchanged(RunConfig(train={"batch_size": 32}), meta, world=1)
    check_config_unchanged(RunConfig(train={"batch_size": 8}), meta, world=4)


def test_a_changed_global_batch_is_refused_with_the_batch_size_that_keeps_it(tmp_path):
    meta = saved_meta(tmp_path, world=2, batch_size=16)
    err = refusal(RunConfig(train={"batch_size": 16}), meta, world=1)
    assert err.message == ("the run trained at a global batch of 32 (2 processes x train.batch_size=16); "
                           "1 process x train.batch_size=16 would make it 16")
    assert err.hint == "resume with train.batch_size=32 under 1 process (train.batch_size is per process)"
    err = refusal(RunConfig(train={"batch_size": 16}), meta, world=4)
    assert err.hint == "resume with train.batch_size=8 under 4 processes (train.batch_size is per process)"
    err = refusal(RunConfig(train={"batch_size": 16}), meta, world=3)
    assert err.hint == ("32 samples per batch cannot be split evenly over 3 processes; resume under a number of "
                        "processes that divides it (1, 2, 4, 8, 16, 32), with train.batch_size=32 / processes")
    # The same processes with another batch size: a different run, refused the same way.
    err = refusal(RunConfig(train={"batch_size": 8}), meta, world=2)
    assert err.hint == "resume with train.batch_size=16 under 2 processes (train.batch_size is per process)"


def test_at_the_right_global_batch_any_other_change_is_still_refused(tmp_path):
    meta = saved_meta(tmp_path, world=2, batch_size=16)
    err = refusal(RunConfig(train={"batch_size": 32}, optim={"lr": 0.5}), meta, world=1)
    assert err.message == "the run's config changed since the checkpoint (optim.lr)"


def test_checkpoints_without_a_world_size_count_as_one_process(tmp_path):
    meta = saved_meta(tmp_path, world=1, batch_size=16)
    del meta["world_size"]
    check_config_unchanged(RunConfig(train={"batch_size": 16}), meta, world=1)
    check_config_unchanged(RunConfig(train={"batch_size": 8}), meta, world=2)
    err = refusal(RunConfig(train={"batch_size": 16}), meta, world=2)
    assert err.hint == "resume with train.batch_size=8 under 2 processes (train.batch_size is per process)"
    # An FSDP checkpoint from before said its processes only in its sharded section.
    sharded = {**meta, "sharded": {"world_size": 2, "optimizer": "dcp"}}
    check_config_unchanged(RunConfig(train={"batch_size": 32}), sharded, world=1)


@pytest.fixture
def stopped_run(tmp_path: Path) -> Path:
    """A one-process run at batch 8 with a checkpoint."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    config = quiet_config(train={"epochs": 1, "batch_size": 8}, checkpoint={"enabled": True})
    result = torchwise.fit(model, tiny_classification(), config=config, runs_dir=tmp_path)
    assert result.status == "completed"
    return result.run_dir


def test_resume_takes_train_batch_size_exactly_when_it_keeps_the_global_batch(stopped_run, monkeypatch):
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(key, raising=False)
    skip = ("model", "data")
    assert load_run_config(stopped_run, skip=skip).train.batch_size == 8
    with pytest.raises(ResumeError) as err:
        load_run_config(stopped_run, ["train.batch_size=4"], skip=skip)
    assert err.value.hint == "resume with train.batch_size=8 under 1 process (train.batch_size is per process)"
    under_torchrun(monkeypatch, 2)  # before the process group: torchrun's WORLD_SIZE decides
    assert load_run_config(stopped_run, ["train.batch_size=4"], skip=skip).train.batch_size == 4
    with pytest.raises(ResumeError) as err:
        load_run_config(stopped_run, skip=skip)
    assert err.value.hint == "resume with train.batch_size=4 under 2 processes (train.batch_size is per process)"


def test_the_cli_refuses_a_changed_global_batch_with_error_and_hint(stopped_run, monkeypatch, capsys):
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(SystemExit) as stop:
        main(["resume", str(stopped_run), "train.batch_size=16", "-q"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[:2] == [
        "error: the run trained at a global batch of 8 (1 process x train.batch_size=8); "
        "1 process x train.batch_size=16 would make it 16",
        "hint: resume with train.batch_size=8 under 1 process (train.batch_size is per process)"]
