"""Every command that reads a config takes what `torchwise train` takes: a `model.target` fed
dict samples (HF style: the model computes its own loss) gets summarised, tuned, profiled and
exported, not refused as if a built-in model had to take it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchwise.cli import main

CODE = '''
import torch
from torch import nn


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n=160):
        generator = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, 50, (n, 12), generator=generator)
        self.labels = (self.ids[:, 0] > 25).long()

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


def tokens():
    return Tokens()


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.EmbeddingBag(50, 16)
        self.head = nn.Linear(16, 2)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.embed(input_ids))
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = nn.functional.cross_entropy(logits, labels)
        return out
'''


def run(*argv: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    assert exit_.value.code == 0


@pytest.fixture
def config(tmp_path: Path) -> Path:
    (tmp_path / "bag_tokens.py").write_text(CODE)
    path = tmp_path / "config.yaml"
    path.write_text("data: {source: target, target: 'bag_tokens:tokens'}\n"
                    "model: {target: 'bag_tokens:BagClassifier'}\n"
                    "train: {epochs: 1, batch_size: 32}\nlog: {progress: 'off'}\n")
    return path


def test_summary_and_tuners_take_a_target_model_with_dict_samples(config, capsys, monkeypatch):
    monkeypatch.chdir(config.parent)  # tune lr draws lr_finder.png here
    run("summary", str(config), "--json")
    layers = json.loads(capsys.readouterr().out)
    assert layers["total_params"] == 50 * 16 + 16 * 2 + 2
    run("tune", "lr", str(config), "--json")
    found = json.loads(capsys.readouterr().out)
    assert 1e-7 <= found["suggested_lr"] <= 10 and len(found["lrs"]) == len(found["losses"]) > 10
    run("tune", "batch-size", str(config), "--json")
    assert json.loads(capsys.readouterr().out)["batch_size"] == 128  # the whole training split (160 less 20%)


def test_export_of_a_target_model_run_with_dict_samples(config, tmp_path, capsys):
    run("train", str(config), "--run-dir", str(tmp_path / "runs"), "--name", "bag")
    capsys.readouterr()
    run("export", str(tmp_path / "runs" / "bag"))
    out = capsys.readouterr().out
    # Trained with its labels (the model computed its loss); exported for inference, without them.
    assert "inputs     input_ids: int64 [batch, 12]\n" in out and "outputs    logits: float32 [batch, 2]\n" in out
    assert "max abs diff 0," in out
    import numpy as np
    import torch

    import torchwise

    tokens = torch.randint(0, 50, (5, 12), generator=torch.Generator().manual_seed(1))
    np.savez(tmp_path / "tokens.npz", input_ids=tokens.numpy())
    model = torchwise.load_model(tmp_path / "runs" / "bag")
    with torch.no_grad():
        expected = model(input_ids=tokens)["logits"].argmax(1)
    run("predict", str(tmp_path / "runs" / "bag" / "export" / "model.pt2"), str(tmp_path / "tokens.npz"))
    rows = [line.split(",") for line in capsys.readouterr().out.splitlines() if line[:1].isdigit()]
    assert [int(row[1]) for row in rows] == expected.tolist()
