"""Curve verdicts judged against the scale of what the run did: jumps of a loss fitted to a small
fraction of its start, a plateau below half a guess's loss, a spike the curve comes straight back
from. Each on a hand-written record (metrics.jsonl, facts.json), so only the rule is under test."""

from __future__ import annotations

import json

from torchwise.diagnose.run_diagnosis import diagnose_run


def write_run(folder, losses: list[float], facts: dict | None = None, lrs: list[float] | None = None) -> None:
    folder.mkdir()
    (folder / "summary.json").write_text(json.dumps({"status": "completed"}))
    (folder / "config.yaml").write_text("task: {type: regression}\noptim: {lr: 0.001}\n")
    lrs = lrs or [0.001] * len(losses)
    lines = [{"step": 4 * (i + 1), "epoch": 0, "split": "train", "loss": v, "lr": lr}
             for i, (v, lr) in enumerate(zip(losses, lrs, strict=True))]
    (folder / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    if facts is not None:
        (folder / "facts.json").write_text(json.dumps(facts))


def test_jumps_of_a_loss_fitted_to_a_percent_of_its_start_are_noise_not_the_lr(tmp_path):
    fitted = [1.0, 0.5, 0.2, 0.05, 0.02] + [0.01, 0.004] * 6  # +-150% between lines, at 1% of the start
    write_run(tmp_path / "fitted", fitted)
    assert diagnose_run(tmp_path / "fitted").healthy
    bouncing = [1.0, 0.9, 0.8] + [0.4, 0.9] * 6  # such jumps where the loss began: the LR
    write_run(tmp_path / "bouncing", bouncing)
    assert "lr_too_high" in diagnose_run(tmp_path / "bouncing").codes()


def test_a_plateau_below_half_a_guesss_loss_is_not_underfitting(tmp_path):
    plateau = [1.0, 0.9, 0.8, 0.7, 0.65, 0.62, 0.61, 0.6, 0.6, 0.6, 0.6, 0.6]
    target = {"mean": 0.0, "variance": 1.0, "output_variance": 1.0, "min": -3.0, "max": 3.0, "outputs": 1}
    write_run(tmp_path / "noisy", plateau, {"target": target, "loss": {"source": "task", "kind": "mse"}})
    assert "underfitting" in diagnose_run(tmp_path / "noisy").codes()  # 0.6 of 1.0: not half of it removed
    write_run(tmp_path / "fitted", plateau, {"target": {**target, "variance": 4.0, "output_variance": 4.0},
                                             "loss": {"source": "task", "kind": "mse"}})
    assert diagnose_run(tmp_path / "fitted").healthy  # 0.6 of 4.0: the floor is the data's noise


def test_a_spike_the_curve_comes_back_from_is_outliers_and_one_that_stays_is_a_shift(tmp_path):
    falling = [1.0, 0.7, 0.5, 0.35, 0.3, 0.28, 0.26]
    decay = [0.001 * (1 - i / 20) for i in range(20)]  # a decaying LR: the step size did not grow
    spikes = falling + [3.1, 0.25, 0.24, 0.26, 2.9, 0.23, 0.22, 0.23, 0.22, 0.21, 0.22, 0.21]
    write_run(tmp_path / "spikes", spikes, lrs=decay[:len(spikes)])
    assert "data_shift" not in diagnose_run(tmp_path / "spikes").codes()  # a batch of a heavy tail's values
    shifted = falling + [3.1, 0.3, 2.8, 3.5, 1.9, 2.6, 3.0, 0.9, 2.2, 2.5, 2.4, 2.6]
    write_run(tmp_path / "shifted", shifted, lrs=decay[:len(shifted)])
    assert "data_shift" in diagnose_run(tmp_path / "shifted").codes()
