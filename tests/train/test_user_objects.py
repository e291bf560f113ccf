"""Your loss, optimizer, scheduler and metrics as Python objects (fit) and as YAML targets (train)."""

from __future__ import annotations

import functools
import math
import os
import signal

import pytest
import torch
import yaml
from tests.helpers import quiet_config, step_losses, tiny_classification
from torch import nn
from torch.nn import functional as F
from torch.utils.data import Dataset

import torchwise
from torchwise.errors import ConfigError
from torchwise.runs.folder import read_jsonl


def mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def rows(run_dir, split: str) -> list[dict]:
    return [r for r in read_jsonl(run_dir / "metrics.jsonl") if r["split"] == split]


def test_class_weighted_loss_from_config_and_from_an_object(tmp_path):
    data = tiny_classification(n=96)
    weight = [1.0, 3.0, 0.5]
    plain = quiet_config(train={"epochs": 2, "batch_size": 16}, data={"shuffle": False})
    by_config = torchwise.fit(mlp(), data, runs_dir=tmp_path, config={**plain, "task": {"class_weights": weight}})
    by_object = torchwise.fit(mlp(), data, runs_dir=tmp_path, config=plain,
                              loss=nn.CrossEntropyLoss(weight=torch.tensor(weight)))
    # the first step's loss is the weighted cross-entropy of the untrained model on the first batch
    x, y = data.tensors
    expected = F.cross_entropy(mlp()(x[:16]), y[:16], weight=torch.tensor(weight)).item()
    losses = step_losses(by_config.run_dir)
    assert abs(losses[0] - expected) < 1e-6
    assert step_losses(by_object.run_dir) == pytest.approx(losses, abs=1e-6)
    saved = yaml.safe_load((by_object.run_dir / "config.yaml").read_text())["task"]["loss"]
    assert saved["target"] == "torch.nn.modules.loss:CrossEntropyLoss" and "not recorded" in saved["note"]


def test_rmsprop_from_a_factory_matches_a_hand_written_loop(tmp_path):
    data = tiny_classification(n=64)
    config = quiet_config(train={"epochs": 2, "batch_size": 16, "clip_grad_norm": None},
                          schedule={"name": "constant"}, optim={"weight_decay": 0.0}, data={"shuffle": False})
    model = mlp()
    result = torchwise.fit(model, data, runs_dir=tmp_path, config=config,
                           optimizer=lambda groups: torch.optim.RMSprop(groups, lr=0.01, alpha=0.9))
    reference = mlp()
    optimizer = torch.optim.RMSprop(reference.parameters(), lr=0.01, alpha=0.9)
    x, y = data.tensors
    for _ in range(2):
        for start in range(0, 64, 16):
            optimizer.zero_grad()
            F.cross_entropy(reference(x[start:start + 16]), y[start:start + 16]).backward()
            optimizer.step()
    for key, value in reference.state_dict().items():
        assert torch.allclose(model.state_dict()[key], value, atol=1e-6), key
    assert rows(result.run_dir, "train")[0]["lr"] == pytest.approx(0.01)
    optim = yaml.safe_load((result.run_dir / "config.yaml").read_text())["optim"]
    assert "<lambda>" in optim["target"] and "lambda" in optim["note"]


def constant_metric(logits, target):
    return torch.tensor(0.5)


def test_reduce_lr_on_plateau_steps_on_the_monitored_metric(tmp_path):
    data, val = tiny_classification(n=64), tiny_classification(n=30, seed=1)
    config = quiet_config(train={"epochs": 4, "batch_size": 16, "monitor": "val_flat"})
    result = torchwise.fit(
        mlp(), data, val, runs_dir=tmp_path, config=config, metrics={"flat": constant_metric},
        optimizer=lambda groups: torch.optim.SGD(groups, lr=0.1),
        scheduler=lambda opt: torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0))
    lrs = [r["lr"] for r in rows(result.run_dir, "train")]
    # evaluation 1 sets the best; each later one does not improve: the LR halves after it
    assert lrs == pytest.approx([0.1] * 8 + [0.05] * 4 + [0.025] * 4)
    assert [r["flat"] for r in rows(result.run_dir, "val")] == pytest.approx([0.5] * 4)


def test_torchmetrics_f1_and_a_function_metric_drive_early_stopping(tmp_path):
    torchmetrics = pytest.importorskip("torchmetrics")
    data, val = tiny_classification(n=96), tiny_classification(n=30, seed=1)

    def agree(logits, target):
        return (logits.argmax(1) == target).float().mean()

    f1 = torchmetrics.classification.MulticlassF1Score(num_classes=3, average="macro")
    config = quiet_config(train={"epochs": 30, "batch_size": 8, "monitor": "val_f1"}, optim={"lr": 1e-9},
                          early_stop={"enabled": True, "patience": 2})
    model = mlp()
    result = torchwise.fit(model, data, val, runs_dir=tmp_path, config=config, metrics={"f1": f1, "agree": agree})
    # lr 1e-9: nothing improves, so the run stops after the first evaluation and 2 more
    assert result.status == "early_stopped" and result.summary["epochs"] == 3
    assert result.best["metric"] == "val_f1" and result.best["epoch"] == 0
    x, y = val.tensors
    with torch.no_grad():
        predicted = model.eval()(x).argmax(1)
    per_class = []
    for c in range(3):
        tp = ((predicted == c) & (y == c)).sum().item()
        fp = ((predicted == c) & (y != c)).sum().item()
        fn = ((predicted != c) & (y == c)).sum().item()
        per_class.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    final = result.summary["final"]
    assert final["val_f1"] == pytest.approx(sum(per_class) / 3, abs=1e-6)
    # val batches of 16 and 14: averaging over samples (not batches) gives the accuracy exactly
    assert [r["agree"] for r in rows(result.run_dir, "val")] == pytest.approx(
        [r["accuracy"] for r in rows(result.run_dir, "val")], abs=1e-6)

    stopped = torchwise.fit(mlp(), data, val, runs_dir=tmp_path, metrics={"agree": agree}, config={
        **config, "train": {**config["train"], "monitor": "val_agree", "monitor_mode": "max"}})
    assert stopped.status == "early_stopped" and stopped.best["metric"] == "val_agree"


# --- exactness with dict batches ----------------------------------------------------------------

class DictData(Dataset):
    def __init__(self, n: int = 96, seed: int = 0) -> None:
        self.inner = tiny_classification(n=n, seed=seed)

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, i: int) -> dict:
        x, y = self.inner[i]
        return {"features": x, "labels": y}


class DictModel(nn.Module):
    """forward(features, labels) -> {"loss", "logits"}; dropout draws from the RNG every step."""

    def __init__(self, interrupt_after_forward: int | None = None) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))
        self.interrupt_after_forward = interrupt_after_forward
        self.forwards = 0

    def forward(self, features: torch.Tensor, labels: torch.Tensor | None = None) -> dict:
        if self.training:
            self.forwards += 1
            if self.forwards == self.interrupt_after_forward:
                os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, in the middle of a step
        logits = self.body(features)
        return {"loss": F.cross_entropy(logits, labels), "logits": logits}


def test_accumulation_4x8_equals_32_with_dict_batches(tmp_path):
    weights = []
    for batch_size, accumulate in ((32, 1), (8, 4)):
        model = DictModel()
        model.body[2].p = 0.0  # dropout draws differ between the two splits; without it the steps must agree
        torchwise.fit(model, DictData(), runs_dir=tmp_path, config=quiet_config(
            train={"epochs": 2, "batch_size": batch_size, "accumulate": accumulate}))
        weights.append(model.state_dict())
    for key in weights[0]:
        assert torch.allclose(weights[0][key], weights[1][key], atol=1e-6), key


RMSPROP = functools.partial(torch.optim.RMSprop, lr=0.003, alpha=0.95)


def step_lr(optimizer):
    return torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.7)


def test_resume_after_sigint_is_bit_equal_with_dict_batches_and_user_objects(tmp_path):
    config = quiet_config(train={"epochs": 3, "batch_size": 8, "accumulate": 2}, checkpoint={"enabled": True})
    objects = {"optimizer": RMSPROP, "scheduler": step_lr}
    reference = DictModel()
    ref = torchwise.fit(reference, DictData(), DictData(30, seed=1), runs_dir=tmp_path / "ref", config=config,
                        **objects)
    # 18: the pre-training check now runs the first training batch in train mode too, so the 17th
    # training forward is the 18th call
    first = torchwise.fit(DictModel(interrupt_after_forward=18), DictData(), DictData(30, seed=1),
                          runs_dir=tmp_path / "stopped", config=config, **objects)
    assert first.status == "interrupted" and first.summary["steps"] == 9
    model = DictModel()
    resumed = torchwise.fit(model, DictData(), DictData(30, seed=1), resume=first.run_dir, **objects)
    assert resumed.status == "completed" and resumed.summary["steps"] == ref.summary["steps"] == 18
    assert step_losses(resumed.run_dir)[-9:] == step_losses(ref.run_dir)[-9:]
    for key, value in reference.state_dict().items():
        assert torch.equal(model.state_dict()[key], value), key
    saved = yaml.safe_load((ref.run_dir / "config.yaml").read_text())
    assert saved["optim"]["target"] == "torch.optim.rmsprop:RMSprop"
    assert saved["optim"]["kwargs"] == {"lr": 0.003, "alpha": 0.95}
    assert saved["schedule"]["target"].endswith(":step_lr") and saved["schedule"]["note"] is None


def test_resume_without_the_objects_is_refused(tmp_path):
    config = quiet_config(train={"epochs": 1, "batch_size": 16}, checkpoint={"enabled": True})
    first = torchwise.fit(mlp(), tiny_classification(), runs_dir=tmp_path, config=config,
                          loss=lambda output, target: F.cross_entropy(output, target))
    with pytest.raises(ConfigError, match="cannot rebuild: task.loss") as info:
        torchwise.fit(mlp(), tiny_classification(), resume=first.run_dir, overrides=["train.epochs=2"])
    assert "resume=RUN_DIR" in info.value.hint and "loss=" in info.value.hint
    assert not math.isnan(first.summary["final"]["train_loss"])
