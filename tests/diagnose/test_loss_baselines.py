"""The baseline is the one for the loss that ran and the data the run saw: a multi-label BCE, a
class-weighted cross-entropy, torch's own losses passed as yours, targets seen batch by batch
from a custom Dataset; a loss whose baseline is not known gets none (silence, not a guess)."""

from __future__ import annotations

import json
import math

import pytest
import torch
from tests.diagnose.planted_runs import codes, mlp, train
from torch import nn
from torch.nn import functional as F
from torch.utils.data import Dataset, TensorDataset

from torchwise.config import TaskConfig
from torchwise.train.loss_kind import loss_kind
from torchwise.train.tasks import build_task


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def finding(diagnosis: dict, code: str) -> dict:
    (found,) = [f for f in diagnosis["findings"] if f["code"] == code]
    return found


def test_the_loss_that_ran_is_recognised_by_its_form():
    def kind(loss, task="classification", model_loss=False):
        return loss_kind(build_task(TaskConfig(type=task), loss=loss), model_loss=model_loss)

    assert kind(None) == {"source": "task", "kind": "cross_entropy"}
    assert kind(None, "multilabel") == {"source": "task", "kind": "bce"}
    assert kind(None, model_loss=True) == {"source": "model", "kind": None}
    weighted = kind(nn.CrossEntropyLoss(weight=torch.tensor([1.0, 4.0]), label_smoothing=0.1), model_loss=True)
    assert weighted["kind"] == "cross_entropy" and weighted["class_weights"] == [1.0, 4.0]
    assert weighted["label_smoothing"] == pytest.approx(0.1) and weighted["source"] == "yours"
    assert kind(F.mse_loss, "regression")["kind"] == "mse"
    assert kind(nn.MSELoss(reduction="sum"), "regression")["kind"] is None  # a sum has another baseline
    assert kind(nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0])), "multilabel")["kind"] is None
    assert kind(lambda out, y: (out - y).abs().mean(), "regression") == {"source": "yours", "kind": None}


def label_vectors(n: int, seed: int, *, shuffle: bool) -> TensorDataset:
    x = torch.randn(n, 16, generator=gen(seed))
    y = ((x @ torch.randn(16, 8, generator=gen(99))) > 1.5).float()
    return TensorDataset(x, y[torch.randperm(n, generator=gen(seed + 7))] if shuffle else y)


def test_multilabel_targets_shuffled_are_a_guess_against_each_labels_rate(tmp_path):
    result, diagnosis = train(tmp_path, "ml", mlp(16, 64, 8), label_vectors(1024, 1, shuffle=True),
                              label_vectors(256, 2, shuffle=True), task={"type": "multilabel"}, optim={"lr": 3e-3})
    facts = json.loads((result.run_dir / "facts.json").read_text())
    assert facts["loss"] == {"source": "task", "kind": "bce"} and facts["binary_targets"]["outputs"] == 8
    assert codes(diagnosis, "warn", "error") == {"chance_level"}  # it read `underfitting` before
    evidence = finding(diagnosis, "chance_level")["evidence"]
    assert evidence["prior_bce"] == pytest.approx(facts["binary_targets"]["prior_bce"], abs=1e-4)
    assert evidence["final_train_loss"] > 0.9 * evidence["prior_bce"]


def rare_positives(n: int, seed: int) -> TensorDataset:
    """8% positives and features of noise: nothing to learn but the prior."""
    g = gen(seed)
    return TensorDataset(torch.randn(n, 12, generator=g), (torch.rand(n, generator=g) < 0.08).long())


def test_class_weights_move_the_guess_to_the_weighted_prior(tmp_path):
    result, diagnosis = train(tmp_path, "weighted", mlp(12, 32, 2), rare_positives(2048, 1), rare_positives(512, 2),
                              task={"class_weights": [1.0, 11.0]}, optim={"lr": 3e-3})
    counts = json.loads((result.run_dir / "facts.json").read_text())["class_counts"]
    mass = [counts[0] * 1.0, counts[1] * 11.0]
    weighted = [m / sum(mass) for m in mass]
    chance = finding(diagnosis, "chance_level")  # it read healthy before: class weights had no baseline
    assert chance["evidence"]["class_weighted"] is True
    assert chance["evidence"]["prior_entropy"] == pytest.approx(-sum(p * math.log(p) for p in weighted), abs=1e-4)
    assert "weighted by the class weights" in chance["summary"]


def test_torchs_own_loss_passed_as_yours_keeps_its_baseline_and_an_unknown_loss_gets_none(tmp_path):
    _, known = train(tmp_path, "ce_module", mlp(12, 32, 2), rare_positives(2048, 1), rare_positives(512, 2),
                     loss=nn.CrossEntropyLoss(), optim={"lr": 3e-3})
    assert "chance_level" in codes(known, "error")
    result, unknown = train(tmp_path, "own_loss", mlp(12, 32, 2), rare_positives(2048, 1), rare_positives(512, 2),
                            loss=lambda out, y: F.cross_entropy(out, y) + 0.1 * out.pow(2).mean(), optim={"lr": 3e-3})
    assert json.loads((result.run_dir / "facts.json").read_text())["loss"] == {"source": "yours", "kind": None}
    assert "chance_level" not in codes(unknown, "error")  # its baseline is not the labels' entropy


class Ratings(Dataset):
    """(user, item) -> rating, read one sample at a time: no tensors for run_facts to read."""

    def __init__(self, n: int, seed: int) -> None:
        g = gen(seed)
        self.users, self.items = torch.randint(0, 50, (n,), generator=g), torch.randint(0, 40, (n,), generator=g)
        self.ratings = 3.5 + torch.randn(n, generator=g)  # nothing to do with who rated what

    def __len__(self) -> int:
        return len(self.users)

    def __getitem__(self, k: int):
        return (self.users[k], self.items[k]), self.ratings[k:k + 1]


class Factorisation(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.users, self.items, self.bias = nn.Embedding(50, 8), nn.Embedding(40, 8), nn.Parameter(torch.zeros(1))

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        return (self.users(users) * self.items(items)).sum(1, keepdim=True) + self.bias


def test_a_custom_datasets_target_is_seen_batch_by_batch_for_the_baseline(tmp_path):
    result, diagnosis = train(tmp_path, "ratings", Factorisation(), Ratings(4096, 1), Ratings(512, 2),
                              task={"type": "regression"}, optim={"lr": 1e-2}, train={"epochs": 6})
    facts = json.loads((result.run_dir / "facts.json").read_text())
    ratings = Ratings(4096, 1).ratings.double()
    assert facts["observed_samples"] == 4096 and facts["target"]["outputs"] == 1
    assert facts["target"]["mean"] == pytest.approx(float(ratings.mean()), rel=1e-6)
    assert facts["target"]["output_variance"] == pytest.approx(float(ratings.var(unbiased=False)), rel=1e-4)
    assert diagnosis["findings"][0]["code"] == "predicts_mean"  # it read healthy before: no target facts


def heavy_tailed(n: int, seed: int) -> TensorDataset:
    """A price-like target: exp of a linear signal, from a few units to tens of thousands."""
    g = gen(seed)
    x = torch.randn(n, 6, generator=g)
    return TensorDataset(x, torch.exp(2.0 * x[:, :1] + x[:, 1:2] + 5 + 0.3 * torch.randn(n, 1, generator=g)))


def test_a_raw_target_spanning_orders_of_magnitude_is_the_target_not_a_data_shift(tmp_path):
    result, diagnosis = train(tmp_path, "wide", mlp(6, 64, 1), heavy_tailed(1024, 1), heavy_tailed(256, 2),
                              task={"type": "regression"}, optim={"lr": 3e-3}, train={"epochs": 6})
    assert codes(diagnosis, "warn", "error") == {"unscaled_target"}  # the loss spikes on the largest values
    target = finding(diagnosis, "unscaled_target")
    assert target["fix"].startswith("train on log(y)")
    assert target["evidence"]["target_max"] > 1000 * target["evidence"]["target_min"] > 0


def test_a_raw_target_under_a_loss_without_a_baseline_is_judged_by_the_validation_mae(tmp_path):
    result, diagnosis = train(tmp_path, "huber", mlp(6, 64, 1), heavy_tailed(1024, 1), heavy_tailed(256, 2),
                              loss=nn.HuberLoss(), task={"type": "regression"}, optim={"lr": 3e-3})
    assert json.loads((result.run_dir / "facts.json").read_text())["loss"]["kind"] is None
    target = finding(diagnosis, "unscaled_target")  # no R^2 for a Huber loss: the MAE of the median instead
    assert target["evidence"]["explained_val_mae"] < 0.9
    assert target["evidence"]["median_mae"] == pytest.approx(
        json.loads((result.run_dir / "facts.json").read_text())["target"]["abs_deviation"], rel=1e-3)


def weak_signal(n: int, seed: int) -> TensorDataset:
    """8% positives, each of 12 features shifted by 0.4 for them: a little to learn, not much."""
    g = gen(seed)
    y = (torch.rand(n, generator=g) < 0.08).long()
    return TensorDataset(torch.randn(n, 12, generator=g) + 0.4 * y[:, None], y)


def test_a_weak_signal_is_not_memorised_rows_when_validation_has_more_of_the_rare_class(tmp_path):
    result, diagnosis = train(tmp_path, "weak", mlp(12, 32, 2), weak_signal(2048, 1), weak_signal(512, 2),
                              optim={"lr": 3e-3}, train={"epochs": 6})
    facts = json.loads((result.run_dir / "facts.json").read_text())
    train_share, val_share = (facts[k][1] / sum(facts[k]) for k in ("class_counts", "val_class_counts"))
    assert val_share > train_share  # the prior alone scores worse on these validation labels
    assert "chance_level" not in codes(diagnosis, "error")  # it beat that, if not the training entropy


def test_a_custom_datasets_facts_stop_at_their_row_caps():
    """Past LABEL_SAMPLES targets and INPUT_ROWS input rows a batch is not seen: the facts are a
    sample of the first epoch, and facts.json says how many rows it held."""
    from torchwise.train.observed import INPUT_ROWS, LABEL_SAMPLES, ObservedData

    seen = ObservedData(task="classification", base={})
    batch = (torch.ones(4096, 3), torch.zeros(4096, dtype=torch.long))
    for _ in range(LABEL_SAMPLES // 4096 + 3):
        seen.add(batch)
    facts = seen.facts()
    assert facts["observed_samples"] == LABEL_SAMPLES and facts["class_counts"] == [LABEL_SAMPLES]
    assert seen.input_rows == INPUT_ROWS
