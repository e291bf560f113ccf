from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch
from torch.utils.data import Dataset

from torchwise.cli import main
from torchwise.tune.workers import MAX_REPEATS, MAX_SPREAD, TOO_NOISY, WorkerTrial, candidates, full_grid, tune_loader
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
    assert result.num_workers in [t.num_workers for t in result.trials]
    # No speed is asserted (a busy machine moves them by a third): the grid times every setting in full.
    grid = full_grid(work, max_workers=4, batches=10)
    assert [t.num_workers for t in grid] == [0, 1, 2, 4]
    assert all(t.complete and t.batches == 10 and t.samples_per_second > 0 for t in grid)


def planted(loader: list[float], step: list[float]) -> dict:
    """Measuring functions that return planted speeds: 1 worker (the reference) gives ``loader`` in
    turn, 0 workers falls short, and the model step gives ``step`` in turn."""
    speeds, steps = iter(loader), iter(step)

    def measure_loader(work, num_workers, *, batch_size, batches, give_up_after=None) -> WorkerTrial:
        speed = next(speeds) if num_workers == 1 else 10.0
        return WorkerTrial(num_workers=num_workers, samples_per_second=speed, batches=batches, seconds=0.1,
                           complete=num_workers == 1)

    return {"measure_loader": measure_loader, "measure_step": lambda work, *, batch_size: next(steps)}


def tune_planted(loader: list[float], step: list[float]):
    work = from_objects(torch.nn.Linear(16, 2), SlowSamples(n=64), config={"train": {"batch_size": 16}})
    return tune_loader(work, max_workers=1, batches=5, **planted(loader, step))


def test_a_noisy_measurement_is_too_noisy_to_call():
    # Loader and model around 1,000 samples/s, each moving by half between measurements.
    result = tune_planted([1000, 1600, 700, 1500, 800, 1400], [1200, 700, 1500, 900, 1300, 800])
    assert result.verdict == TOO_NOISY
    assert result.loader_repeats == result.step_repeats == MAX_REPEATS  # bounded: it stops trying
    assert result.loader_spread == pytest.approx((1500 - 800) / 1400)
    assert result.step_spread == pytest.approx((1300 - 800) / 900)
    assert result.num_workers == 1 and result.loader_samples_per_second == 1400


def test_a_quiet_measurement_gives_a_verdict_and_its_spread():
    result = tune_planted([1000, 1010, 990], [5000, 5050, 4950])
    assert result.verdict == "data-bound"
    assert result.loader_repeats == result.step_repeats == 3
    assert result.loader_spread == pytest.approx(20 / 1000) and result.step_spread == pytest.approx(100 / 5000)
    assert result.loader_samples_per_second == 1000 and result.step_samples_per_second == 5000


def test_noise_settles_after_repeats_and_far_apart_ranges_still_call():
    # An outlier first, then three that agree: the verdict comes from those three.
    settled = tune_planted([3000, 1000, 1010, 990], [500, 505, 495])
    assert settled.verdict == "compute-bound" and settled.loader_repeats == 4
    assert settled.loader_spread < MAX_SPREAD
    # Both noisy, but the loader's worst is far below the model's best: data-bound all the same.
    apart = tune_planted([1000, 1600, 700, 1500, 800, 1400], [90_000, 60_000, 120_000, 70_000, 110_000, 65_000])
    assert apart.verdict == "data-bound" and apart.loader_spread > MAX_SPREAD


def test_cli_json_has_the_pick_and_the_verdict(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["tune", "workers", str(ROOT / "examples/digits.yaml"), "--max-workers", "1", "--batches", "5",
              "--json"])
    assert exit_.value.code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["num_workers"] in (0, 1) and result["verdict"] in ("data-bound", "compute-bound", TOO_NOISY)
    assert result["loader_spread"] >= 0 and result["step_spread"] >= 0 and result["loader_repeats"] >= 3
    assert result["candidates"] == [0, 1]
