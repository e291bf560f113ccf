"""Options of the train path that the other tests do not reach: each checked by its effect."""

from __future__ import annotations

import json

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from torch import nn

import torchwise
from torchwise.errors import ConfigError
from torchwise.runs.folder import read_jsonl


def mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def test_eval_every_validates_mid_epoch(tmp_path):
    cfg = quiet_config(train={"epochs": 1, "batch_size": 10, "eval_every": 4})
    result = torchwise.fit(mlp(), tiny_classification(), tiny_classification(n=20, seed=1), config=cfg,
                           runs_dir=tmp_path)
    val_steps = [r["step"] for r in read_jsonl(result.run_dir / "metrics.jsonl") if r["split"] == "val"]
    assert val_steps == [4, 8, 10]  # every 4 steps, and the epoch's end


def test_eval_every_on_an_epoch_end_evaluates_once_and_counts_once(tmp_path):
    cfg = quiet_config(train={"epochs": 3, "batch_size": 10, "eval_every": 5, "monitor": "val_loss"},
                       optim={"lr": 1e-9}, early_stop={"enabled": True, "patience": 3, "min_delta": 1.0})
    result = torchwise.fit(mlp(), tiny_classification(), tiny_classification(n=20, seed=1), config=cfg,
                           runs_dir=tmp_path)
    val_steps = [r["step"] for r in read_jsonl(result.run_dir / "metrics.jsonl") if r["split"] == "val"]
    assert val_steps == [5, 10, 15, 20]  # step 10 is an epoch's end and an eval_every step: once
    assert result.status == "early_stopped" and result.summary["steps"] == 20


def test_every_n_steps_and_keep_last_n(tmp_path):
    cfg = quiet_config(train={"epochs": 1, "batch_size": 10}, checkpoint={"enabled": True, "every_n_steps": 3,
                                                                          "keep_last_n": 2})
    result = torchwise.fit(mlp(), tiny_classification(), config=cfg, runs_dir=tmp_path)
    folder = result.run_dir / "checkpoints"
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == [
        "best", "last", "step-000000009", "step-000000010"]
    assert json.loads((folder / "last" / "meta.json").read_text())["step"] == 10
    hidden = [p for p in folder.iterdir() if p.name.startswith(".")]
    assert len(hidden) == 4  # one data folder per link: nothing left over from older saves


def test_bf16_autocast_on_cpu_trains(tmp_path):
    cfg = quiet_config(train={"epochs": 2, "precision": "bf16"})
    result = torchwise.fit(mlp(), tiny_classification(), config=cfg, runs_dir=tmp_path)
    assert json.loads((result.run_dir / "env.json").read_text())["precision"] == "bf16"
    losses = [r["loss"] for r in read_jsonl(result.run_dir / "metrics.jsonl") if r["split"] == "train"]
    assert losses[-1] < losses[0]


def test_fp16_on_cpu_is_refused_with_the_alternative(tmp_path):
    with pytest.raises(ConfigError) as err:
        torchwise.fit(mlp(), tiny_classification(), config=quiet_config(train={"precision": "fp16"}),
                      runs_dir=tmp_path)
    assert err.value.hint == "use train.precision=bf16 or fp32 on CPU"


def test_a_user_loss_by_target(tmp_path):
    cfg = quiet_config(task={"loss": "torch.nn:MultiMarginLoss"}, train={"epochs": 1}, data={"shuffle": False})
    result = torchwise.fit(mlp(), tiny_classification(), config=cfg, runs_dir=tmp_path)
    first = [r for r in read_jsonl(result.run_dir / "metrics.jsonl") if r["split"] == "train"][0]
    x, y = tiny_classification().tensors
    assert first["loss"] == pytest.approx(nn.MultiMarginLoss()(mlp()(x[:64]), y[:64]).item(), rel=1e-5)


def test_deterministic_turns_on_deterministic_algorithms(tmp_path):
    try:
        torchwise.fit(mlp(), tiny_classification(), config=quiet_config(train={"epochs": 1, "deterministic": True}),
                      runs_dir=tmp_path)
        assert torch.are_deterministic_algorithms_enabled()
    finally:
        torch.use_deterministic_algorithms(False)


def test_tensorboard_scalars(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    cfg = quiet_config(train={"epochs": 2}, log={"tensorboard": True})
    result = torchwise.fit(mlp(), tiny_classification(), tiny_classification(n=20, seed=1), config=cfg,
                           runs_dir=tmp_path)
    events = EventAccumulator(str(result.run_dir / "tensorboard"))
    events.Reload()
    assert {"train/loss", "val/loss", "val/accuracy"} <= set(events.Tags()["scalars"])
    assert [e.step for e in events.Scalars("val/loss")] == [2, 4]


def test_explicit_validation_source_and_csv(tmp_path):
    rows = "\n".join(f"{i % 7},{(i * 3) % 5},{i % 2}" for i in range(40))
    (tmp_path / "train.csv").write_text("a,b,label\n" + rows + "\n")
    (tmp_path / "val.csv").write_text("a,b,label\n" + "\n".join(rows.splitlines()[:10]) + "\n")
    config = tmp_path / "c.yaml"
    config.write_text("data: {source: csv, path: train.csv, val: {source: csv, path: val.csv}}\n"
                      "model: {name: linear}\ntrain: {epochs: 1}\nlog: {progress: off}\n")
    cfg = torchwise.load_config(config)
    from torchwise.train.run import run_training

    result = run_training(cfg, runs_dir=tmp_path / "runs")
    assert result.status == "completed" and "val_accuracy" in result.summary["final"]


@pytest.mark.slow
def test_compile_gives_the_same_losses_as_eager(tmp_path):
    def losses(compile_: bool) -> list[float]:
        cfg = quiet_config(train={"epochs": 1, "compile": compile_})
        result = torchwise.fit(mlp(), tiny_classification(), config=cfg, runs_dir=tmp_path)
        return [r["loss"] for r in read_jsonl(result.run_dir / "metrics.jsonl") if r["split"] == "train"]

    assert losses(True) == pytest.approx(losses(False), rel=1e-4)


def test_init_from_a_checkpoint_folder_and_a_pt_file(tmp_path):
    cfg = quiet_config(train={"epochs": 2}, checkpoint={"enabled": True})
    trained = mlp()
    first = torchwise.fit(trained, tiny_classification(), config=cfg, runs_dir=tmp_path, name="first")
    torch.save(trained.state_dict(), tmp_path / "weights.pt")
    for source in (first.run_dir / "checkpoints" / "last", tmp_path / "weights.pt"):
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        cfg = quiet_config(train={"epochs": 1}, optim={"lr": 1e-12}, model={"init_from": str(source)})
        result = torchwise.fit(model, tiny_classification(), config=cfg, runs_dir=tmp_path, name="second")
        event = [e for e in read_jsonl(result.run_dir / "events.jsonl") if e["event"] == "init_from"][0]
        assert event["loaded"] == 4 and event["missing"] == []
        torch.testing.assert_close(model[0].weight, trained[0].weight, atol=1e-6, rtol=0)


def test_init_from_weights_of_another_shape_is_refused_when_strict(tmp_path):
    from torchwise.errors import CheckpointError

    torch.save(nn.Linear(6, 4).state_dict(), tmp_path / "other.pt")
    cfg = quiet_config(model={"init_from": str(tmp_path / "other.pt")})
    with pytest.raises(CheckpointError, match="do not fit the model"):
        torchwise.fit(nn.Linear(6, 3), tiny_classification(), config=cfg, runs_dir=tmp_path)
    loose = quiet_config(model={"init_from": str(tmp_path / "other.pt"), "strict": False}, train={"epochs": 1})
    assert torchwise.fit(nn.Linear(6, 3), tiny_classification(), config=loose, runs_dir=tmp_path).status == "completed"
