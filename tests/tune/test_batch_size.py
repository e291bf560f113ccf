from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from tests.tune.snapshots import assert_same, snapshot
from torch import nn

from torchwise.cli import main
from torchwise.errors import RunFailed
from torchwise.tune.batch_size import find_batch_size, search_largest

ROOT = Path(__file__).resolve().parents[2]


class RunsOutAbove(nn.Module):
    """A test double for the allocation: any batch above ``fits`` samples is out of memory, as
    CUDA would say it, after the forward has started (so there is memory to give back)."""

    def __init__(self, net: nn.Module, fits: int) -> None:
        super().__init__()
        self.net, self.fits = net, fits

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.net[0](x)
        if x.shape[0] > self.fits:
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {x.shape[0]} samples")
        return self.net[1:](hidden)


@pytest.mark.parametrize("fits", [2, 3, 37, 64, 200])
def test_returns_exactly_the_largest_size_that_fits(trained_mlp, fits):
    net, optimizer, scheduler, data = trained_mlp
    model = RunsOutAbove(net, fits)
    before = snapshot(model, optimizer, scheduler)
    result = find_batch_size(model, data, optimizer=optimizer, budget="64GiB")
    assert result.batch_size == fits
    assert [t.how for t in result.trials if not t.fits] and all(
        t.how == "out of memory" for t in result.trials if not t.fits)
    assert_same(before, snapshot(model, optimizer, scheduler))


def test_stops_at_the_dataset_size(trained_mlp):
    net, optimizer, _, data = trained_mlp
    result = find_batch_size(net, data, optimizer=optimizer, budget="64GiB")
    assert result.batch_size == len(data) == result.limit
    assert [t.batch_size for t in result.trials] == [2, 4, 8, 16, 32, 64, 128, 256]


def test_on_cpu_the_estimate_guards_the_budget(trained_mlp):
    from torchwise.tune.memory import estimate_memory

    net, optimizer, _, data = trained_mlp
    budget = estimate_memory(net, data, optimizer=optimizer, batch_size=100, bf16=False).predicted_peak_bytes
    result = find_batch_size(net, data, optimizer=optimizer, budget=budget)
    assert result.batch_size == 100
    assert {t.how for t in result.trials if not t.fits} == {"predicted over budget"}


def test_nothing_fits_is_an_error(trained_mlp):
    net, optimizer, _, data = trained_mlp
    with pytest.raises(RunFailed, match="not even a batch of 1 sample fits") as err:
        find_batch_size(RunsOutAbove(torch.nn.Sequential(torch.nn.Linear(16, 3)), 0), data, budget="64GiB")
    assert "--budget" in err.value.hint


def test_search_is_doubling_then_bisection():
    largest, tried = search_largest(lambda size: size <= 300, limit=10_000)
    assert largest == 300
    assert tried == [2, 4, 8, 16, 32, 64, 128, 256, 512, 384, 320, 288, 304, 296, 300, 302, 301]


def test_cli_reports_the_config_keys(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.jsonl").write_text("")
    with pytest.raises(SystemExit) as exit_:
        main(["tune", "batch-size", str(ROOT / "examples/digits.yaml"), "train.accumulate=4", "--budget", "2MiB",
              "--json", "--run", str(run)])
    assert exit_.value.code == 0
    result = json.loads(capsys.readouterr().out)
    assert 64 < result["batch_size"] < 1437 and result["budget_bytes"] == 2 * 2**20
    assert result["micro_batch"] * result["accumulate"] == result["effective_batch"] == 256
    assert json.loads((run / "events.jsonl").read_text())["batch_size"] == result["batch_size"]


def test_cli_bad_budget_is_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["tune", "batch-size", str(ROOT / "examples/digits.yaml"), "--budget", "lots"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: cannot read 'lots' as a memory size", "hint: write a number with a unit, e.g. 8GiB, 512MiB or 16GB"]
