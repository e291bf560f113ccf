from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from tests.tune.snapshots import assert_same, snapshot

from torchwise.cli import main
from torchwise.tune.lr import lr_range_test, smooth, suggest

ROOT = Path(__file__).resolve().parents[2]
TRACE = json.loads((Path(__file__).parent / "data/digits_lr_trace.json").read_text())


def documented_rules(lrs: list[float], losses: list[float]) -> tuple[float, float]:
    """The two rules as the docstring states them, written independently with numpy."""
    losses = np.asarray(losses)
    weights = 0.98 ** np.arange(len(losses))[::-1]
    smoothed = np.array([(losses[:i + 1] * weights[-(i + 1):]).sum() * 0.02 / (1 - 0.98 ** (i + 1))
                         for i in range(len(losses))])
    end = int(smoothed.argmin()) + 1
    slopes = np.gradient(smoothed[:end], np.log10(lrs[:end]))
    steepest = lrs[int(slopes.argmin())]
    falls = np.diff(smoothed[:end]) < 0
    runs, start = [], 0  # (length, start) of each run of consecutive falls
    for i, fall in enumerate(falls, start=1):
        if not fall:
            start = i
        else:
            runs.append((i - start, -start))
    length, negative_start = max(runs)
    return lrs[-negative_start + (2 * length) // 3], steepest


def test_recorded_trace_suggestion_is_the_documented_rule():
    lrs, losses = TRACE["lrs"], TRACE["losses"]
    smoothed = smooth(losses)
    suggested, steepest, valley = suggest(lrs, smoothed)
    valley_rule, steepest_rule = documented_rules(lrs, losses)
    assert (suggested, valley, steepest) == (valley_rule, valley_rule, steepest_rule)
    assert suggested == pytest.approx(3.35e-3, rel=0.01) and steepest == pytest.approx(1.02e-2, rel=0.01)


def test_smoothing_is_a_bias_corrected_moving_average():
    assert smooth([2.0]) == [pytest.approx(2.0)]
    assert smooth([1.0, 3.0], beta=0.5) == [pytest.approx(1.0), pytest.approx((0.25 + 1.5) / 0.75)]


def test_state_is_restored_bit_for_bit(trained_mlp):
    model, optimizer, scheduler, data = trained_mlp
    before = snapshot(model, optimizer, scheduler)
    result = lr_range_test(model, data, optimizer=optimizer, scheduler=scheduler, num_steps=30, batch_size=32)
    assert len(result.lrs) >= 3
    assert_same(before, snapshot(model, optimizer, scheduler))


def test_stops_once_the_loss_passes_four_times_its_best():
    torch.manual_seed(0)
    x = torch.randn(256, 8)
    data = torch.utils.data.TensorDataset(x, x @ torch.randn(8, 1))
    model = torch.nn.Linear(8, 1)
    result = lr_range_test(model, data, config={"task": {"type": "regression"}, "optim": {"name": "sgd"},
                                                "train": {"clip_grad_norm": None}},
                           start_lr=1e-4, end_lr=1e3, num_steps=60, batch_size=32)
    assert result.stopped.startswith("loss passed 4x its best")
    assert len(result.lrs) < 60
    assert all(math.isfinite(v) for v in result.losses)
    assert result.smoothed[-1] > 4 * min(result.smoothed[:-1]) or not math.isfinite(result.losses[-1])


def test_cli_json_plot_and_run_event(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.jsonl").write_text("")
    with pytest.raises(SystemExit) as exit_:
        main(["tune", "lr", str(ROOT / "examples/digits.yaml"), "--steps", "40", "--json", "--run", str(run)])
    assert exit_.value.code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["rule"] == "valley" and result["suggested_lr"] == result["valley_lr"]
    assert 1e-7 <= result["suggested_lr"] <= 10 and 3 <= len(result["lrs"]) <= 40
    assert (run / "lr_finder.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    event = json.loads((run / "events.jsonl").read_text())
    assert event["event"] == "tune_lr" and event["suggested_lr"] == result["suggested_lr"]


@pytest.mark.slow
def test_digits_suggestion_trains_to_97_percent(tmp_path):
    import torchwise
    from torchwise.config import load_config
    from torchwise.tune.lr import range_test
    from torchwise.tune.workload import from_config

    cfg = load_config(ROOT / "examples/digits.yaml")
    suggested = range_test(from_config(cfg)).suggested_lr
    from torchwise.train.run import run_training

    cfg = load_config(ROOT / "examples/digits.yaml", [f"optim.lr={suggested}", "log.progress=off"])
    result = run_training(cfg, runs_dir=tmp_path)
    assert result.best["value"] >= 0.97, (suggested, result.best)
    assert torchwise  # the public package stays importable alongside
