"""`torchwise train` with the loss, optimizer, scheduler, metrics and tasks named in YAML."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from torchwise.cli import main
from torchwise.runs.folder import read_jsonl

FOCAL = '''
import torch
from torch.nn import functional as F


class FocalLoss(torch.nn.Module):
    """Lin et al. 2017: cross-entropy scaled by (1 - p_true) ** gamma; gamma=0 is cross-entropy."""

    def __init__(self, gamma: float = 2.0) -> None:
        super().__init__()
        self.gamma = gamma

    def forward(self, logits, target):
        log_p = F.log_softmax(logits.float(), dim=-1).gather(1, target.unsqueeze(1)).squeeze(1)
        return (-(1 - log_p.exp()) ** self.gamma * log_p).mean()
'''

BASE = {"data": {"source": "digits", "standardize": True}, "model": {"name": "mlp", "kwargs": {"hidden": [32]}},
        "train": {"epochs": 1, "max_steps": 6, "batch_size": 64}, "log": {"progress": "off", "every_n_steps": 1},
        "checkpoint": {"enabled": False}}


def train(tmp_path: Path, name: str, config: dict, *extra: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(SystemExit) as exit_:
        main(["train", str(path), "--run-dir", str(tmp_path / "runs"), "-q", *extra])
    assert exit_.value.code == 0
    return tmp_path / "runs" / name


def losses(run: Path) -> list[float]:
    return [r["loss"] for r in read_jsonl(run / "metrics.jsonl") if r["split"] == "train"]


def test_focal_loss_with_kwargs_from_yaml(tmp_path):
    (tmp_path / "focal.py").write_text(FOCAL)
    plain = train(tmp_path, "plain", BASE)
    as_ce = train(tmp_path, "gamma0", {**BASE, "task": {"loss": {"target": "focal:FocalLoss", "kwargs": {"gamma": 0}}}})
    focal = train(tmp_path, "gamma2", {**BASE, "task": {"loss": {"target": "focal:FocalLoss", "kwargs": {"gamma": 2}}}})
    assert losses(as_ce) == pytest.approx(losses(plain), abs=1e-6)  # gamma 0 is cross-entropy, step by step
    # the same untrained model and first batch: focal loss is below cross-entropy
    assert losses(focal)[0] < 0.85 * losses(plain)[0]
    saved = yaml.safe_load((focal / "config.yaml").read_text())["task"]["loss"]
    assert saved == {"target": "focal:FocalLoss", "kwargs": {"gamma": 2}, "note": None}


def test_rmsprop_reduce_on_plateau_and_torchmetrics_f1_from_yaml_resume_exactly(tmp_path):
    pytest.importorskip("torchmetrics")
    config = {**BASE, "train": {"epochs": 4, "batch_size": 128, "monitor": "val_f1"},
              "checkpoint": {"enabled": True},
              "optim": {"target": "torch.optim:RMSprop", "lr": 0.002, "kwargs": {"alpha": 0.9}},
              "schedule": {"target": "torch.optim.lr_scheduler:ReduceLROnPlateau",
                           "kwargs": {"mode": "max", "factor": 0.5, "patience": 0, "threshold": 0.5}},
              "task": {"metrics": {"f1": {"target": "torchmetrics.classification:MulticlassF1Score",
                                          "kwargs": {"num_classes": 10, "average": "macro"}}}}}
    whole = train(tmp_path, "whole", config)
    lrs = [r["lr"] for r in read_jsonl(whole / "metrics.jsonl") if r["split"] == "train"]
    # threshold 0.5: no evaluation counts as better, so the LR halves after every one but the first
    assert sorted(set(lrs), reverse=True) == pytest.approx([0.002, 0.001, 0.0005])
    val = [r for r in read_jsonl(whole / "metrics.jsonl") if r["split"] == "val"]
    assert len(val) == 4 and val[-1]["f1"] > 0.7
    summary = json.loads((whole / "summary.json").read_text())
    assert summary["best"]["metric"] == "val_f1"

    half = train(tmp_path, "half", {**config, "train": {**config["train"], "epochs": 2}})
    with pytest.raises(SystemExit) as exit_:
        main(["resume", str(half), "train.epochs=4", "-q"])
    assert exit_.value.code == 0
    assert losses(half) == losses(whole)  # bit for bit: optimizer and scheduler state came back
    resumed_val = [r for r in read_jsonl(half / "metrics.jsonl") if r["split"] == "val"]
    assert resumed_val[-1]["f1"] == val[-1]["f1"]


def test_csv_text_labels_are_indexed_and_kept_with_the_run(tmp_path, capsys):
    rng = np.random.default_rng(0)
    names = ["setosa", "versicolor", "virginica"]
    lines = ["sepal,petal,species"]
    for i in range(90):
        label = i % 3
        lines.append(f"{rng.normal(label, 0.3):.3f},{rng.normal(2 * label, 0.3):.3f},{names[label]}")
    (tmp_path / "iris.csv").write_text("\n".join(lines) + "\n")
    run = train(tmp_path, "iris", {**BASE, "data": {"source": "csv", "path": "iris.csv", "standardize": True},
                                   "train": {"epochs": 10, "batch_size": 16}, "optim": {"lr": 0.01}})
    assert json.loads((run / "data_stats.json").read_text())["classes"] == names
    summary = json.loads((run / "summary.json").read_text())
    assert summary["final"]["val_accuracy"] > 0.9


def test_a_class_without_samples_is_warned_about(tmp_path, capsys):
    np.savez(tmp_path / "d.npz", x=np.random.default_rng(0).normal(size=(40, 4)).astype("float32"),
             y=np.arange(40) % 3 + 1)  # labels 1..3: class 0 never occurs
    run = train(tmp_path, "shifted", {**BASE, "data": {"source": "npz", "path": "d.npz"}})
    (event,) = [e for e in read_jsonl(run / "events.jsonl") if e["event"] == "empty_classes"]
    assert event["classes"] == [0] and event["num_classes"] == 4


def test_multilabel_from_yaml(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 6)).astype("float32")
    y = np.stack([x[:, 0] > 0, x[:, 1] > 0, x[:, 2] + x[:, 3] > 0], 1).astype("float32")
    np.savez(tmp_path / "ml.npz", x=x, y=y)
    run = train(tmp_path, "ml", {**BASE, "data": {"source": "npz", "path": "ml.npz"}, "task": {"type": "multilabel"},
                                 "train": {"epochs": 12, "batch_size": 20}, "optim": {"lr": 0.01}})
    final = json.loads((run / "summary.json").read_text())["final"]
    assert final["val_f1"] > 0.85 and 0.5 < final["val_exact_match"] <= final["val_f1"] + 0.2


HF_STYLE = '''
import torch
from torch import nn
from torch.nn import functional as F


class Samples(torch.utils.data.Dataset):
    def __init__(self, n=256, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, 5, (n, 12), generator=g)
        self.labels = ((self.ids == 1).sum(1) > (self.ids == 2).sum(1)).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


class Classifier(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.embed, self.head = nn.Embedding(5, width), nn.Linear(width, 2)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.embed(input_ids).mean(1))
        return {"loss": F.cross_entropy(logits, labels) if labels is not None else None, "logits": logits}
'''


def test_hf_style_dict_samples_and_a_model_with_its_own_loss_from_yaml(tmp_path):
    (tmp_path / "hfstyle.py").write_text(HF_STYLE)
    run = train(tmp_path, "hf", {"data": {"source": "target", "target": "hfstyle:Samples", "kwargs": {"n": 320}},
                                 "model": {"target": "hfstyle:Classifier"},
                                 "train": {"epochs": 8, "batch_size": 32}, "optim": {"lr": 0.05},
                                 "log": {"progress": "off", "every_n_steps": 1}, "checkpoint": {"enabled": False}})
    summary = json.loads((run / "summary.json").read_text())
    assert summary["samples"] == 8 * 256  # 320 minus the 20% validation split, per epoch
    assert losses(run)[-1] < 0.6 * losses(run)[0] and summary["final"]["val_accuracy"] > 0.8
