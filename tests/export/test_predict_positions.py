"""Export and predict beyond one class per sample: a language model's [B, T, V] logits, a
segmenter's [B, C, H, W], a multi-label tagger, trained from YAML with the models and data in the
user's own module; and one folder holding the same run in several formats."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from torchwise.cli import main
from torchwise.export.exporter import export_run
from torchwise.export.predict import predict

CODE = '''
import torch
from torch import nn


class Chars(torch.utils.data.Dataset):
    """Next-character prediction; the last two positions of every sequence are padding (-100)."""

    def __init__(self, n=96, t=10):
        generator = torch.Generator().manual_seed(0)
        self.x = torch.randint(0, 12, (n, t + 1), generator=generator)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        target = self.x[i, 1:].clone()
        target[-2:] = -100
        return self.x[i, :-1], target


class CharLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(12, 8)
        self.rnn = nn.GRU(8, 16, batch_first=True)
        self.out = nn.Linear(16, 12)

    def forward(self, x):
        hidden, _ = self.rnn(self.embed(x))
        return self.out(hidden)


class Masks(torch.utils.data.Dataset):
    """Pixels above 0 are class 1, the rest class 0; a void border of 255."""

    def __init__(self, n=64):
        generator = torch.Generator().manual_seed(1)
        self.x = torch.randn(n, 1, 6, 6, generator=generator)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        mask = (self.x[i, 0] > 0).long()
        mask[0, :] = 255
        return self.x[i], mask


class Tags(torch.utils.data.Dataset):
    """Three yes/no labels: is each of the first three features above 0."""

    def __init__(self, n=120):
        self.x = torch.randn(n, 6, generator=torch.Generator().manual_seed(3))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], (self.x[i, :3] > 0).float()


class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)

    def forward(self, x):
        return self.conv(x)
'''


def train(folder: Path, name: str, config: str) -> Path:
    (folder / "position_models.py").write_text(CODE)
    path = folder / f"{name}.yaml"
    path.write_text(config + "log: {progress: 'off'}\n")
    with pytest.raises(SystemExit) as exit_:
        main(["train", str(path), "--run-dir", str(folder / "runs"), "--name", name])
    assert exit_.value.code == 0
    return folder / "runs" / name


@pytest.fixture(scope="module")
def lm_run(tmp_path_factory) -> Path:
    return train(tmp_path_factory.mktemp("lm"), "lm",
                 "data: {source: target, target: 'position_models:Chars'}\n"
                 "model: {target: 'position_models:CharLM'}\n"
                 "task: {num_classes: 12}\ntrain: {epochs: 2, batch_size: 16}\n")


def test_a_language_model_predicts_a_class_per_position(lm_run, tmp_path):
    import torchwise

    result = export_run(lm_run)
    task = result.manifest["task"]
    assert (task["class_dim"], task["ignore_index"]) == (-1, -100)
    assert result.manifest["normalization"] is None  # token ids: no transform to apply
    generator = torch.Generator().manual_seed(5)
    tokens = torch.randint(0, 12, (7, 10), generator=generator)
    labels = torch.randint(0, 12, (7, 10), generator=generator)
    labels[:, -2:] = -100
    np.savez(tmp_path / "tokens.npz", x=tokens.numpy(), y=labels.numpy())
    model = torchwise.load_model(lm_run)
    with torch.no_grad():
        logits = model(tokens)
    want = logits.argmax(-1)
    for source in (lm_run, result.path):
        got = predict(source, tmp_path / "tokens.npz")
        assert torch.equal(got.predictions, want)
        counted = labels != -100
        assert got.accuracy == pytest.approx((want == labels)[counted].double().mean().item())
        torch.testing.assert_close(got.probabilities, torch.softmax(logits.double(), -1).amax(-1))
    buffer = io.StringIO()
    got.write_csv(buffer)
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "id,prediction,probability"
    assert lines[1].split(",")[1] == " ".join(str(i) for i in want[0].tolist())


def test_a_segmenter_predicts_a_class_per_pixel(tmp_path):
    run = train(tmp_path, "seg", "data: {source: target, target: 'position_models:Masks'}\n"
                                 "model: {target: 'position_models:Segmenter'}\n"
                                 "task: {num_classes: 2, ignore_index: 255}\n"
                                 "train: {epochs: 1, batch_size: 16}\n")
    result = export_run(run, fmt="torchscript")
    assert (result.manifest["task"]["class_dim"], result.manifest["task"]["ignore_index"]) == (1, 255)
    images = torch.randn(3, 1, 6, 6, generator=torch.Generator().manual_seed(2))
    masks = (images[:, 0] > 0).long()
    masks[:, 0, :] = 255
    np.savez(tmp_path / "images.npz", x=images.numpy(), y=masks.numpy())
    got = predict(result.path, tmp_path / "images.npz", out=tmp_path / "masks.json")
    with torch.no_grad():
        want = torch.jit.load(result.path)(images).argmax(1)
    assert got.predictions.shape == (3, 6, 6) and torch.equal(got.predictions, want)
    assert got.accuracy == pytest.approx((want == masks)[masks != 255].double().mean().item())
    rows = json.loads((tmp_path / "masks.json").read_text())
    assert [[int(c) for c in row] for row in rows[2]["prediction"]] == want[2].tolist()


def test_one_folder_holds_a_run_in_every_format(lm_run, tmp_path):
    tokens = torch.randint(0, 12, (4, 10), generator=torch.Generator().manual_seed(3))
    np.savez(tmp_path / "tokens.npz", x=tokens.numpy())
    exported = export_run(lm_run, out=tmp_path / "out")
    scripted = export_run(lm_run, fmt="torchscript", out=tmp_path / "out")
    assert exported.manifest_path.name == "model.pt2.json" and scripted.manifest_path.name == "model.pt.json"
    # The second export left the first one's manifest (and its sha256) alone.
    first, second = (predict(p, tmp_path / "tokens.npz") for p in (exported.path, scripted.path))
    assert torch.equal(first.predictions, second.predictions)


def test_a_multilabel_tagger_predicts_the_labels_that_are_on(tmp_path):
    import torchwise

    run = train(tmp_path, "tags", "data: {source: target, target: 'position_models:Tags'}\n"
                                  "model: {name: linear}\ntask: {type: multilabel}\n"
                                  "train: {epochs: 20, batch_size: 16}\noptim: {lr: 0.05}\n")
    result = export_run(run)
    assert result.manifest["task"]["type"] == "multilabel"
    features = torch.randn(50, 6, generator=torch.Generator().manual_seed(4))
    labels = (features[:, :3] > 0).float()
    np.savez(tmp_path / "tags.npz", x=features.numpy(), y=labels.numpy())
    got = predict(result.path, tmp_path / "tags.npz")
    with torch.no_grad():
        logits = torchwise.load_model(run)(features)
    assert torch.equal(got.predictions, (logits > 0).long())
    torch.testing.assert_close(got.probabilities, torch.sigmoid(logits.double()))
    want = ((logits > 0) == (labels > 0.5)).all(1).double().mean().item()
    assert got.accuracy == want and want > 0.8  # a linear model learns these three labels
    first = got.rows()[0]
    assert first["prediction"] == [j for j in range(3) if logits[0, j] > 0] and len(first["probability"]) == 3
