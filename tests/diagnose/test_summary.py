"""`torchwise.summary` and `torchwise summary`: shapes match a hand-traced forward, parameter totals
equal sum(p.numel()), dict/tuple inputs work, a shape error names the failing layer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import torchwise
from torchwise.config import ModelConfig
from torchwise.models import build_model

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("name", "sample_shape"), [("linear", (20,)), ("mlp", (20,)), ("small-cnn", (3, 8, 8))])
def test_builtin_models_total_every_parameter_once(name, sample_shape):
    model = build_model(ModelConfig(name=name), sample_shape=sample_shape, out_features=5)
    batch = (torch.randn(4, *sample_shape), torch.zeros(4, dtype=torch.long))
    result = torchwise.summary(model, batch)
    assert result.total_params == sum(p.numel() for p in model.parameters())
    assert result.trainable_params == result.total_params
    assert result.failed_layer is None
    assert result.rows[-1].output_shape == "[4, 5]"


def test_mlp_shapes_and_macs_match_a_hand_traced_forward():
    model = build_model(ModelConfig(name="mlp", kwargs={"hidden": [16, 8]}), sample_shape=(12,), out_features=3)
    result = torchwise.summary(model, (torch.randn(5, 12), torch.zeros(5)))
    linear = [r for r in result.rows if r.type == "Linear"]
    # 12 -> 16 -> 8 -> 3 on a batch of 5: MACs = batch x in x out per Linear
    assert [(r.input_shape, r.output_shape) for r in linear] == [("[5, 12]", "[5, 16]"), ("[5, 16]", "[5, 8]"),
                                                                  ("[5, 8]", "[5, 3]")]
    assert [r.params for r in linear] == [12 * 16 + 16, 16 * 8 + 8, 8 * 3 + 3]
    assert [r.macs for r in linear] == [5 * 12 * 16, 5 * 16 * 8, 5 * 8 * 3]
    assert result.total_macs == 5 * (12 * 16 + 16 * 8 + 8 * 3)


def test_conv_macs_and_frozen_parameters():
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 2))
    model[0].weight.requires_grad_(False)
    result = torchwise.summary(model, torch.randn(2, 3, 6, 6))
    conv = result.rows[0]
    assert (conv.input_shape, conv.output_shape) == ("[2, 3, 6, 6]", "[2, 8, 6, 6]")
    assert conv.macs == 2 * 8 * 6 * 6 * 3 * 3 * 3
    assert conv.params == 8 * 3 * 9 + 8 and conv.trainable == 8
    assert result.trainable_params == result.total_params - 8 * 3 * 9


class DictModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 6)
        self.head = nn.Linear(6, 2)
        self.head.weight = nn.Parameter(torch.randn(2, 6))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        hidden = self.embed(ids) * mask.unsqueeze(-1)
        return self.head(hidden.mean(dim=1))


class TupleModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.image = nn.Linear(4, 3)
        self.meta = nn.Linear(2, 3)
        self.shared = nn.Linear(3, 3)

    def forward(self, image: torch.Tensor, meta: torch.Tensor) -> torch.Tensor:
        return self.shared(self.shared(self.image(image) + self.meta(meta)))  # `shared` runs twice


def test_dict_inputs():
    batch = ({"ids": torch.randint(0, 50, (3, 7)), "mask": torch.ones(3, 7)}, torch.zeros(3))
    model = DictModel()
    result = torchwise.summary(model, batch)
    rows = {r.name: r for r in result.rows}
    assert (rows["embed"].input_shape, rows["embed"].output_shape) == ("[3, 7]", "[3, 7, 6]")
    assert (rows["head"].input_shape, rows["head"].output_shape) == ("[3, 6]", "[3, 2]")
    assert result.total_params == sum(p.numel() for p in model.parameters()) == 50 * 6 + 2 * 6 + 2


def test_tuple_inputs_and_a_module_called_twice_counts_its_parameters_once():
    model = TupleModel()
    result = torchwise.summary(model, ((torch.randn(2, 4), torch.randn(2, 2)), torch.zeros(2)))
    assert [r.name for r in result.rows] == ["image", "meta", "shared", "shared"]
    assert [r.params for r in result.rows if r.name == "shared"] == [12, 0]
    assert result.total_params == sum(p.numel() for p in model.parameters())


def test_a_shape_error_stops_the_table_at_the_failing_layer():
    model = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Sequential(nn.Linear(5, 2), nn.ReLU()), nn.Linear(2, 1))
    result = torchwise.summary(model, torch.randn(3, 8))
    assert result.failed_layer == "2.0"
    assert [r.name for r in result.rows] == ["0", "1", "2", "2.0"]
    assert result.rows[-1].failed and result.rows[-1].input_shape == "[3, 4]"
    assert "mat1 and mat2 shapes cannot be multiplied" in result.error
    assert model.training  # the mode is restored


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchwise", "summary", *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "COLUMNS": "120"}, timeout=300)


def test_cli_on_the_digits_config(tmp_path):
    out = cli(str(ROOT / "examples/digits.yaml"), "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    # 64 -> 256 -> 128 -> 10, as examples/digits.yaml configures the MLP
    assert result["total_params"] == 64 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10
    assert result["rows"][0]["input_shape"] == "[64, 64]"
    text = cli(str(ROOT / "examples/digits.yaml"), cwd=tmp_path)
    assert "parameters: 50,826 (50,826 trainable)" in text.stdout


def test_cli_names_the_failing_layer_and_exits_1(tmp_path):
    (tmp_path / "broken.py").write_text("from torch import nn\n\ndef make():\n"
                                        "    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(16, 10))\n")
    config = tmp_path / "broken.yaml"
    config.write_text("data: {source: digits}\nmodel: {target: 'broken:make'}\n")
    out = cli(str(config), cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert "the forward pass failed in layer '2'" in out.stdout and "mat1 and mat2" in out.stdout
