"""`torchwise.load_model`: the trained model back, bit for bit, tied weights tied, or a report."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from torch import nn
from torch.utils.data import TensorDataset

import torchwise
from torchwise.checkpoints.checkpoint import load_checkpoint
from torchwise.errors import CheckpointError, WeightsMismatch

SAVING = {"checkpoint": {"enabled": True}}


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


class TiedLM(nn.Module):
    """A next-token model whose output layer shares the embedding's weight."""

    def __init__(self, vocab: int = 7, width: int = 5) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.mix = nn.Linear(width, width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(torch.tanh(self.mix(self.embed(tokens))))


def test_a_fit_model_comes_back_with_equal_predictions(tmp_path: Path) -> None:
    trained = mlp()
    result = torchwise.fit(trained, tiny_classification(), config=quiet_config(train={"epochs": 2}, **SAVING),
                           runs_dir=tmp_path)
    loaded = torchwise.load_model(result.run_dir, mlp(), which="last")
    assert not loaded.training and loaded is not trained
    new_data = torch.randn(20, 6, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        assert torch.equal(loaded(new_data), trained.eval()(new_data))


def test_best_is_the_checkpoint_of_the_best_metric(tmp_path: Path) -> None:
    data = tiny_classification()
    result = torchwise.fit(mlp(), data, tiny_classification(seed=1),
                           config=quiet_config(train={"epochs": 3}, **SAVING), runs_dir=tmp_path)
    loaded = torchwise.load_model(result.run_dir, mlp())  # which="best" is the default
    best = load_checkpoint(result.run_dir / "checkpoints" / "best")
    assert best.meta["step"] == result.best["step"]
    for key, value in loaded.state_dict().items():
        assert torch.equal(value, best.model_state[key]), key


def test_tied_weights_come_back_tied_with_equal_predictions(tmp_path: Path) -> None:
    tokens = torch.randint(0, 7, (200,), generator=torch.Generator().manual_seed(0))
    trained = TiedLM()
    result = torchwise.fit(trained, TensorDataset(tokens, (tokens + 1) % 7),
                           config=quiet_config(train={"epochs": 2}, **SAVING), runs_dir=tmp_path)
    saved = load_checkpoint(result.run_dir / "checkpoints" / "last")
    assert saved.meta["model_aliases"] == {"head.weight": "embed.weight"}  # stored once

    loaded = torchwise.load_model(result.run_dir, TiedLM(), which="last")
    assert loaded.head.weight is loaded.embed.weight
    with torch.no_grad():
        assert torch.equal(loaded(torch.arange(7)), trained.eval()(torch.arange(7)))


def test_a_config_model_is_built_from_the_run(tmp_path: Path) -> None:
    from torchwise.config import load_config
    from torchwise.train.run import run_training

    torch.save({"x": torch.randn(60, 4), "y": torch.arange(60) % 3}, tmp_path / "data.pt")
    (tmp_path / "run.yaml").write_text("data: {source: pt, path: data.pt}\nmodel: {name: mlp, kwargs: {hidden: [8]}}\n"
                                       "train: {epochs: 2}\nlog: {progress: 'off'}\n")
    result = run_training(load_config(tmp_path / "run.yaml"), runs_dir=tmp_path / "runs")
    loaded = torchwise.load_model(result.run_dir, which="last")
    saved = load_checkpoint(result.run_dir / "checkpoints" / "last").model_state
    assert [tuple(p.shape) for p in loaded.parameters()] == [(8, 4), (8,), (3, 8), (3,)]
    assert all(torch.equal(value, saved[key]) for key, value in loaded.state_dict().items())
    x = torch.randn(5, 4)
    with torch.no_grad():
        expected = torch.func.functional_call(loaded, saved, (x,))
        assert torch.equal(loaded(x), expected) and not loaded.training


def test_the_wrong_module_gets_a_report_of_every_kind_of_key(tmp_path: Path) -> None:
    result = torchwise.fit(mlp(), tiny_classification(), config=quiet_config(train={"epochs": 1}, **SAVING),
                           runs_dir=tmp_path)
    wrong = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4), nn.Linear(4, 2))
    with pytest.raises(WeightsMismatch) as error:
        torchwise.load_model(result.run_dir, wrong, which="last")
    report = error.value.report
    assert report.missing == ["3.weight", "3.bias"] and report.unexpected == []
    assert report.shape_mismatches == [("2.weight", (3, 16), (4, 16)), ("2.bias", (3,), (4,))]
    assert "do not fit Sequential: missing keys (2): ['3.weight', '3.bias']" in error.value.message
    assert "2.weight: file [3, 16] vs model [4, 16]" in error.value.message
    assert "the same class and arguments" in error.value.hint
    assert isinstance(error.value, CheckpointError)


def test_a_python_model_must_be_passed_and_a_missing_checkpoint_is_named(tmp_path: Path) -> None:
    result = torchwise.fit(mlp(), tiny_classification(), config=quiet_config(train={"epochs": 1}, **SAVING),
                           runs_dir=tmp_path)
    python_model = r"came from Python code \(torch.nn.modules.container:Sequential\)"
    with pytest.raises(CheckpointError, match=python_model) as error:
        torchwise.load_model(result.run_dir)
    assert "torchwise.load_model(run_dir, MyModel(...))" in error.value.hint

    plain = torchwise.fit(mlp(), tiny_classification(), config=quiet_config(train={"epochs": 1}),
                          runs_dir=tmp_path)
    with pytest.raises(CheckpointError, match="has no 'best' checkpoint \\(it saved none\\)") as error:
        torchwise.load_model(plain.run_dir, mlp())
    assert "checkpoint.enabled=true" in error.value.hint
    with pytest.raises(CheckpointError, match="not a torchwise run folder"):
        torchwise.load_model(tmp_path, mlp())
