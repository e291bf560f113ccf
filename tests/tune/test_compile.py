from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from torchwise.cli import main
from torchwise.tune.compile import break_even

ROOT = Path(__file__).resolve().parents[2]


def test_break_even_arithmetic():
    assert break_even(compile_seconds=10.0, eager_step=0.004, compiled_step=0.002) == 5000
    assert break_even(compile_seconds=10.0, eager_step=0.004, compiled_step=0.004) is None


@pytest.mark.slow
def test_compile_reports_compile_seconds_and_break_even(tmp_path, capsys, trained_mlp):
    from tests.tune.snapshots import assert_same, snapshot

    from torchwise.tune.compile import compile_gain

    model, optimizer, scheduler, data = trained_mlp
    before = snapshot(model, optimizer, scheduler)
    result = compile_gain(model, data, optimizer=optimizer, steps=5, batch_size=32)
    assert_same(before, snapshot(model, optimizer, scheduler))
    assert result.compile_seconds > 0
    # A second measurement in the same process compiles afresh, as the run's own process will,
    # instead of reusing the first one's graphs (it then reported 0.0005 s and "pays after 1 step").
    # Counted in graphs dynamo built, not in seconds: a busy machine makes step times meaningless.
    from torch._dynamo.utils import counters

    graphs = counters["stats"]["unique_graphs"]
    compile_gain(model, data, optimizer=optimizer, steps=5, batch_size=32)
    assert counters["stats"]["unique_graphs"] > graphs
    if result.break_even_steps is not None:
        saving = (result.eager_step_ms - result.compiled_step_ms) / 1e3
        assert result.break_even_steps == math.ceil(round(result.compile_seconds / saving, 6))
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.jsonl").write_text("")
    with pytest.raises(SystemExit) as exit_:
        main(["tune", "compile", str(ROOT / "examples/digits.yaml"), "--steps", "5", "--json", "--run", str(run)])
    assert exit_.value.code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["compile_seconds"] > 0 and out["run_steps"] == 30 * 23
    assert out["message"].startswith(("compile pays after", "compile never pays"))
    assert json.loads((run / "events.jsonl").read_text())["event"] == "tune_compile"
