"""End to end through fit(): the batch structures and output layouts that real models have.

Each test trains a tiny seeded model on CPU and checks real numbers: the loss goes down, the
sample count is sequences (not tokens), and the logged metric equals a hand computation on the
trained model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from tests.helpers import quiet_config, step_losses
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset, TensorDataset

import torchwise
from torchwise.runs.folder import read_jsonl


def events(run_dir) -> list[dict]:
    return read_jsonl(run_dir / "events.jsonl")


def val_rows(run_dir) -> list[dict]:
    return [r for r in read_jsonl(run_dir / "metrics.jsonl") if r["split"] == "val"]


# --- HF style: dict samples, the model takes labels and returns its own loss ---------------------

class DictSamples(Dataset):
    """{"input_ids": [T] long, "labels": long}: the label is whether token 1 occurs more than token 2."""

    def __init__(self, n: int, seed: int) -> None:
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, 5, (n, 12), generator=g)
        self.labels = ((self.ids == 1).sum(1) > (self.ids == 2).sum(1)).long()

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> dict:
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


@dataclass
class SequenceClassifierOutput:
    loss: torch.Tensor | None
    logits: torch.Tensor


class HFStyleClassifier(nn.Module):
    def __init__(self, as_dict: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(5, 16)
        self.head = nn.Linear(16, 2)
        self.as_dict = as_dict

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None):
        logits = self.head(self.embed(input_ids).mean(1))
        loss = F.cross_entropy(logits, labels) * 2.0 if labels is not None else None  # x2: proves it is used
        if self.as_dict:
            return {"loss": loss, "logits": logits}
        return SequenceClassifierOutput(loss=loss, logits=logits)


def hand_accuracy(model: nn.Module, data: Dataset) -> float:
    model.eval()
    with torch.no_grad():
        batch = next(iter(DataLoader(data, batch_size=len(data))))
        output = model(**batch)
        logits = output["logits"] if isinstance(output, dict) else output.logits
        return (logits.argmax(1) == batch["labels"]).float().mean().item()


def test_hf_style_dict_samples_with_the_models_own_loss(tmp_path):
    for as_dict in (False, True):
        model = HFStyleClassifier(as_dict=as_dict)
        train, val = DictSamples(192, seed=0), DictSamples(64, seed=1)
        result = torchwise.fit(model, train, val, runs_dir=tmp_path, config=quiet_config(
            train={"epochs": 6, "batch_size": 32}, optim={"lr": 0.05}))
        losses = step_losses(result.run_dir)
        assert result.status == "completed" and result.summary["samples"] == 6 * 192
        assert losses[-1] < 0.6 * losses[0]
        # The model's own loss (2 x CE) is what trains and what is logged: CE of 2 classes starts near ln 2.
        assert 1.2 < losses[0] < 1.6
        final = result.summary["final"]
        assert abs(final["val_accuracy"] - hand_accuracy(model, val)) < 1e-6
        assert final["val_accuracy"] > 0.8


# --- two inputs: ((image, meta), label) --------------------------------------------------------

class TwoInputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.image = nn.Linear(8, 8)
        self.meta = nn.Linear(2, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, image: torch.Tensor, meta: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.image(image.flatten(1)) + self.meta(meta)))


def test_two_input_model(tmp_path):
    g = torch.Generator().manual_seed(0)
    images, meta = torch.randn(150, 2, 4, generator=g), torch.randn(150, 2, generator=g)
    labels = (images.flatten(1)[:, 0] > 0).long() + (meta[:, 0] > 0.5).long()
    samples = [((images[i], meta[i]), labels[i]) for i in range(150)]
    model = TwoInputs()
    result = torchwise.fit(model, samples[:120], samples[120:], runs_dir=tmp_path, config=quiet_config(
        train={"epochs": 8, "batch_size": 16}, optim={"lr": 0.02}))
    losses = step_losses(result.run_dir)
    assert losses[-1] < 0.7 * losses[0]
    model.eval()
    with torch.no_grad():
        expected = (model(images[120:], meta[120:]).argmax(1) == labels[120:]).float().mean().item()
    assert abs(result.summary["final"]["val_accuracy"] - expected) < 1e-6


# --- a character-level language model: logits [B, T, V] against [B, T] -------------------------

class CharLM(nn.Module):
    def __init__(self, vocab: int) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(vocab, 32)
        self.head = nn.Linear(32, vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.tanh(self.embed(x)))  # [B, T, V]: classes last


def char_data(text: str, length: int = 16):
    vocab = sorted(set(text))
    ids = torch.tensor([vocab.index(c) for c in text])
    starts = range(0, len(ids) - length - 1, 3)
    x = torch.stack([ids[s:s + length] for s in starts])
    y = torch.stack([ids[s + 1:s + length + 1] for s in starts])
    y[:, :2] = -100  # the first positions have no context worth scoring: ignored
    return vocab, TensorDataset(x, y)


def test_char_level_language_model(tmp_path):
    text = "the quick brown fox jumps over the lazy dog. " * 12
    vocab, data = char_data(text)
    model = CharLM(len(vocab))
    result = torchwise.fit(model, data, data, runs_dir=tmp_path, config=quiet_config(
        train={"epochs": 5, "batch_size": 16}, optim={"lr": 0.05}))
    losses = step_losses(result.run_dir)
    assert losses[0] > 2.5 and losses[-1] < 0.5 * losses[0]  # ln(28) = 3.3 at the start
    assert result.summary["samples"] == 5 * len(data)  # sequences, not tokens
    x, y = data.tensors
    model.eval()
    with torch.no_grad():
        predicted = model(x).argmax(-1)
    kept = y != -100
    expected = ((predicted == y) & kept).sum().item() / kept.sum().item()
    assert abs(result.summary["final"]["val_accuracy"] - expected) < 1e-6


# --- segmentation: logits [B, C, H, W] against [B, H, W] ----------------------------------------

def test_segmentation_layout(tmp_path):
    g = torch.Generator().manual_seed(0)
    images = torch.randn(64, 1, 6, 6, generator=g)
    masks = (images[:, 0] > 0.3).long() + (images[:, 0] > 1.0).long()  # 3 classes per pixel
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 1))
    torch.manual_seed(0)
    for layer in model:
        if hasattr(layer, "reset_parameters"):
            layer.reset_parameters()
    data = TensorDataset(images, masks)
    result = torchwise.fit(model, data, data, runs_dir=tmp_path, config=quiet_config(
        train={"epochs": 10, "batch_size": 16}, optim={"lr": 0.03}))
    losses = step_losses(result.run_dir)
    assert losses[-1] < 0.4 * losses[0]
    model.eval()
    with torch.no_grad():
        expected = (model(images).argmax(1) == masks).float().mean().item()
    assert abs(result.summary["final"]["val_accuracy"] - expected) < 1e-6 and expected > 0.85


# --- multi-label: BCE with logits, float 0/1 targets [B, K] -------------------------------------

def test_multilabel_exact_match_and_micro_f1(tmp_path):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 6, generator=g)
    y = torch.stack([x[:, 0] > 0, x[:, 1] > 0, (x[:, 2] + x[:, 3]) > 0, x[:, 4] > 1], 1).float()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 4))
    data, val = TensorDataset(x[:150], y[:150]), TensorDataset(x[150:], y[150:])
    result = torchwise.fit(model, data, val, runs_dir=tmp_path, config=quiet_config(
        task={"type": "multilabel"}, train={"epochs": 15, "batch_size": 25}, optim={"lr": 0.02}))
    losses = step_losses(result.run_dir)
    assert losses[-1] < 0.4 * losses[0]
    model.eval()
    with torch.no_grad():
        predicted = model(x[150:]) > 0
    actual = y[150:] > 0.5
    tp = (predicted & actual).sum().item()
    fp = (predicted & ~actual).sum().item()
    fn = (~predicted & actual).sum().item()
    final = result.summary["final"]
    assert abs(final["val_f1"] - 2 * tp / (2 * tp + fp + fn)) < 1e-6
    assert abs(final["val_exact_match"] - (predicted == actual).all(1).float().mean().item()) < 1e-6
    assert final["val_f1"] > 0.85


# --- regression with 3 outputs ------------------------------------------------------------------

def test_three_output_regression(tmp_path):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(160, 4, generator=g)
    w = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 1.0], [2.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
    y = x @ w
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    result = torchwise.fit(model, TensorDataset(x[:128], y[:128]), TensorDataset(x[128:], y[128:]),
                           runs_dir=tmp_path, config=quiet_config(task={"type": "regression"},
                                                                  train={"epochs": 20, "batch_size": 16},
                                                                  optim={"lr": 0.05, "weight_decay": 0.0}))
    losses = step_losses(result.run_dir)
    assert losses[-1] < 0.01 * losses[0]
    with torch.no_grad():
        expected = (model(x[128:]) - y[128:]).abs().mean(1).mean().item()
    assert abs(result.summary["final"]["val_mae"] - expected) < 1e-5


# --- a user DataLoader that pads variable-length sequences, with its own sampler -----------------

class Sentences(Dataset):
    def __init__(self, n: int) -> None:
        g = torch.Generator().manual_seed(0)
        lengths = torch.randint(3, 11, (n,), generator=g)
        self.items = [torch.randint(1, 6, (int(k),), generator=g) for k in lengths]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        tokens = self.items[i]
        return tokens, int((tokens == 1).float().mean() > 0.2)


def pad(samples: list) -> tuple[dict, torch.Tensor]:
    tokens = nn.utils.rnn.pad_sequence([t for t, _ in samples], batch_first=True)
    return {"tokens": tokens, "mask": tokens != 0}, torch.tensor([label for _, label in samples])


class BagOfTokens(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(6, 16, padding_idx=0)
        self.head = nn.Linear(16, 2)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        summed = (self.embed(tokens) * mask.unsqueeze(-1)).sum(1)
        return self.head(summed / mask.sum(1, keepdim=True))


def test_user_dataloader_with_padding_collate_and_sampler(tmp_path):
    data = Sentences(160)
    # a sampler that visits short sentences first (bucketing, as NLP code does)
    order = sorted(range(len(data)), key=lambda i: len(data.items[i]))
    loader = DataLoader(data, batch_size=16, sampler=order, collate_fn=pad)
    val = DataLoader(data, batch_size=40, collate_fn=pad)
    model = BagOfTokens()
    result = torchwise.fit(model, loader, val, runs_dir=tmp_path, config=quiet_config(
        train={"epochs": 12}, optim={"lr": 0.05}))
    losses = step_losses(result.run_dir)
    assert result.summary["samples"] == 12 * 160
    assert losses[-1] < 0.6 * losses[0]
    model.eval()
    with torch.no_grad():
        right = sum((model(**inputs).argmax(1) == target).sum().item() for inputs, target in val)
    assert abs(result.summary["final"]["val_accuracy"] - right / 160) < 1e-6


# --- a plain list of (ndarray, int): float64 converted once, with an event ---------------------

def test_plain_list_of_numpy_samples(tmp_path):
    rng = np.random.default_rng(0)
    features = rng.normal(size=(120, 5))  # float64, numpy's default
    samples = [(features[i], int(features[i, 0] > 0)) for i in range(120)]
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
    result = torchwise.fit(model, samples[:90], samples[90:], runs_dir=tmp_path, config=quiet_config(
        train={"epochs": 8, "batch_size": 15}, optim={"lr": 0.03}))
    losses = step_losses(result.run_dir)
    assert losses[-1] < 0.5 * losses[0]
    converted = [e for e in events(result.run_dir) if e["event"] == "float64_converted"]
    assert len(converted) == 1 and converted[0]["to"] == "float32"
    with torch.no_grad():
        x = torch.tensor(features[90:], dtype=torch.float32)
        expected = (model(x).argmax(1) == torch.tensor([s[1] for s in samples[90:]])).float().mean().item()
    assert abs(result.summary["final"]["val_accuracy"] - expected) < 1e-6


# --- the out-of-memory split cuts every leaf of a dict batch, strings included -------------------

class NamedSamples(Dataset):
    def __init__(self) -> None:
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(96, 6, generator=g)
        self.y = (self.x[:, 0] > 0).long()

    def __len__(self) -> int:
        return 96

    def __getitem__(self, i: int) -> dict:
        return {"features": self.x[i], "name": f"sample-{i}", "labels": self.y[i]}


class SmallBatchesOnly(nn.Module):
    """Raises torch.OutOfMemoryError, as CUDA would, above ``limit`` samples; checks the names
    stayed aligned with the features they belong to."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
        self.limit = limit

    def forward(self, features: torch.Tensor, name: list[str], labels: torch.Tensor) -> dict:
        assert len(name) == len(features)
        if self.training and len(features) > self.limit:
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {len(features)} MiB")
        logits = self.net(features)
        return {"loss": F.cross_entropy(logits, labels), "logits": logits}


def test_out_of_memory_split_of_dict_batches_equals_planned_accumulation(tmp_path):
    model = SmallBatchesOnly(limit=8)
    result = torchwise.fit(model, NamedSamples(), runs_dir=tmp_path, config=quiet_config(
        train={"batch_size": 32, "epochs": 2}))
    retries = [e for e in events(result.run_dir) if e["event"] == "oom_retry"]
    assert [e["micro_batch"] for e in retries] == [[32, 16], [16, 8]]
    assert result.summary["samples"] == 2 * 96
    planned = SmallBatchesOnly(limit=8)
    expected = torchwise.fit(planned, NamedSamples(), runs_dir=tmp_path, config=quiet_config(
        train={"batch_size": 8, "accumulate": 4, "epochs": 2}))
    assert step_losses(result.run_dir) == step_losses(expected.run_dir)
    for key, value in planned.state_dict().items():
        assert torch.equal(model.state_dict()[key], value), key
