from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch
from torch.utils.data import Dataset

from torchwise.cli import main
from torchwise.tune.workers import candidates, full_grid, tune_loader
from torchwise.tune.workload import from_objects

ROOT = Path(__file__).resolve().parents[2]


class SlowSamples(Dataset):
    """Each sample waits 3 ms, as a file read and decode would: a costly __getitem__."""

    def __init__(self, n: int = 1024) -> None:
        self.x = torch.randn(n, 16)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        time.sleep(0.003)
        return self.x[index], torch.tensor(index % 2)


def test_candidates_are_powers_of_two_up_to_the_cores():
    assert candidates(0) == [0]
    assert candidates(2) == [0, 1, 2]
    assert candidates(8) == [0, 1, 2, 4, 8]
    assert candidates(12) == [0, 1, 2, 4, 8, 12]


def test_costly_getitem_is_data_bound_and_the_search_skips_the_slow_settings(one_thread):
    model = torch.nn.Linear(16, 2)
    work = from_objects(model, SlowSamples(), config={"train": {"batch_size": 16}})
    result = tune_loader(work, max_workers=4, batches=10)
    assert result.verdict == "data-bound"
    assert result.loader_samples_per_second < result.step_samples_per_second
    # The reference (4) first, then bisection: 0 workers, the slowest to time, is never timed.
    assert [t.num_workers for t in result.trials][0] == 4 and 0 not in [t.num_workers for t in result.trials]
    grid = {t.num_workers: t.samples_per_second for t in full_grid(work, max_workers=4, batches=10)}
    # Sleeping workers run in parallel: 4 load about 4x as fast as 1 (wide margin for a busy machine).
    assert grid[4] > 1.5 * grid[1]
    assert grid[result.num_workers] >= 0.85 * max(grid.values())


def test_cli_json_has_the_pick_and_the_verdict(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["tune", "workers", str(ROOT / "examples/digits.yaml"), "--max-workers", "1", "--batches", "5",
              "--json"])
    assert exit_.value.code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["num_workers"] in (0, 1) and result["verdict"] in ("data-bound", "compute-bound")
    assert result["candidates"] == [0, 1]
