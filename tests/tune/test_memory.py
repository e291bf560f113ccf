from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tests.tune.snapshots import assert_same, snapshot
from torch import nn
from torch.utils.data import Dataset, TensorDataset

from torchwise.tune.memory import estimate_memory, measured_peak
from torchwise.tune.workload import from_objects

ROOT = Path(__file__).resolve().parents[2]


def test_parameters_gradients_and_optimizer_state_are_exact():
    model = nn.Linear(100, 10)  # 1010 float32 values
    data = TensorDataset(torch.randn(16, 100), torch.randint(0, 10, (16,)))
    sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    estimate = estimate_memory(model, data, batch_size=8, optimizer=sgd, bf16=False)
    assert (estimate.parameters, estimate.gradients, estimate.optimizer_state) == (4040, 4040, 4040)
    plain = torch.optim.SGD(model.parameters(), lr=0.1)
    assert estimate_memory(model, data, batch_size=8, optimizer=plain, bf16=False).optimizer_state == 0
    half = nn.Linear(100, 10).to(torch.bfloat16)
    adam = torch.optim.Adam(half.parameters(), lr=1e-3)
    data16 = TensorDataset(torch.randn(16, 100, dtype=torch.bfloat16), torch.randint(0, 10, (16,)))
    estimate = estimate_memory(half, data16, batch_size=8, optimizer=adam, bf16=False)
    # bf16 weights: 2 bytes each; Adam keeps two bf16 moments and a float32 step per tensor.
    assert (estimate.parameters, estimate.optimizer_state) == (2020, 2 * 2020 + 2 * 4)


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(16 * 16 * 16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


@pytest.mark.parametrize("batch_size", [16, 64])
def test_predicted_peak_is_within_10_percent_of_a_measured_step(batch_size):
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(128, 3, 16, 16), torch.randint(0, 10, (128,)))
    work = from_objects(ConvNet(), data)
    from torchwise.tune.memory import estimate_workload

    estimate = estimate_workload(work, batch_size=batch_size, bf16=False)
    measured = measured_peak(work, batch_size)
    assert abs(estimate.predicted_peak_bytes / measured - 1) <= 0.10
    # Activations of a conv net grow with the batch: the 4x larger batch has a far larger peak.
    assert estimate.activations_per_sample > 16 * 16 * 16 * 4


def test_bf16_and_accumulation_lower_an_activation_bound_peak():
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(128, 3, 16, 16), torch.randint(0, 10, (128,)))
    estimate = estimate_memory(ConvNet(), data, batch_size=64)
    assert estimate.peak_phase in ("forward", "backward")
    savings = {s.config: s.predicted_peak_bytes for s in estimate.savings}
    assert savings["train.batch_size=16 train.accumulate=4"] < savings["train.batch_size=32 train.accumulate=2"] \
        < estimate.predicted_peak_bytes
    assert savings["train.precision=bf16"] < estimate.predicted_peak_bytes


def test_state_is_restored_bit_for_bit(trained_mlp):
    model, optimizer, scheduler, data = trained_mlp
    before = snapshot(model, optimizer, scheduler)
    estimate_memory(model, data, batch_size=32, optimizer=optimizer)
    assert_same(before, snapshot(model, optimizer, scheduler))


class DictSet(Dataset):
    """Samples as dicts, the model computes its own loss: the Hugging Face shape."""

    def __init__(self) -> None:
        self.x = torch.randn(40, 8)

    def __len__(self) -> int:
        return 40

    def __getitem__(self, i: int) -> dict:
        return {"features": self.x[i], "labels": torch.tensor(i % 2)}


class OwnLoss(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(8, 2)

    def forward(self, features: torch.Tensor, labels: torch.Tensor) -> dict:
        logits = self.net(features)
        return {"loss": nn.functional.cross_entropy(logits, labels), "logits": logits}


def test_dict_batches_and_a_model_that_returns_its_loss():
    estimate = estimate_memory(OwnLoss(), DictSet(), batch_size=16, bf16=False)
    assert estimate.parameters == (8 * 2 + 2) * 4
    assert estimate.batch == 16 * 8 * 4 + 16 * 8  # float features and int64 labels


def test_cli_json_and_run_event(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.jsonl").write_text("")
    out = subprocess.run([sys.executable, "-m", "torchwise", "tune", "memory", str(ROOT / "examples/digits.yaml"),
                          "train.batch_size=32", "--json", "--run", str(run)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    parts = ("parameters", "gradients", "optimizer_state", "activations")
    assert result["batch_size"] == 32 and all(result[k] > 0 for k in parts)
    assert result["predicted_peak_bytes"] >= result["parameters"] + result["optimizer_state"]
    event = json.loads((run / "events.jsonl").read_text())
    assert event["event"] == "tune_memory" and event["predicted_peak_bytes"] == result["predicted_peak_bytes"]


def test_cli_refuses_a_folder_that_is_not_a_run(tmp_path):
    out = subprocess.run([sys.executable, "-m", "torchwise", "tune", "memory", str(ROOT / "examples/digits.yaml"),
                          "--run", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [f"error: {tmp_path} is not a run folder (no events.jsonl)",
                                       "hint: pass a folder that `torchwise train` wrote, e.g. runs/digits"]
