"""`diagnose` on real runs with planted pathologies: each gets its code, the healthy run no warning.

Each run trains a small model on seeded synthetic data for a few seconds. The thresholds were
not fitted to these runs: see README "Diagnose a run" for the digits runs they were checked on.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.diagnose.planted_runs import SlowData, blobs, codes, mlp, train
from torch import nn

from torchwise.diagnose.run_diagnosis import diagnose_run


def test_healthy_run_gets_no_warning(tmp_path):
    result, diagnosis = train(tmp_path, "healthy", mlp(10, 32, 4))
    assert diagnosis["healthy"] is True, diagnosis
    assert codes(diagnosis, "warn", "error") == set()
    assert diagnosis["findings"][0]["code"] == "healthy"
    assert diagnosis == diagnose_run(result.run_dir).to_json()


def test_too_high_lr(tmp_path):
    _, diagnosis = train(tmp_path, "high", mlp(10, 32, 4), optim={"lr": 0.5}, schedule={"name": "constant"},
                         train={"clip_grad_norm": None})
    assert codes(diagnosis, "warn", "error") & {"lr_too_high", "diverging", "nonfinite"}, diagnosis
    finding = next(f for f in diagnosis["findings"] if f["code"] in ("lr_too_high", "diverging", "nonfinite"))
    assert "optim.lr=" in finding["fix"]


def test_too_low_lr(tmp_path):
    _, diagnosis = train(tmp_path, "low", mlp(10, 32, 4), optim={"lr": 1e-6})
    assert codes(diagnosis, "warn", "error") == {"lr_too_low"}, diagnosis
    (finding,) = [f for f in diagnosis["findings"] if f["code"] == "lr_too_low"]
    assert "optim.lr=1e-05 (now 1e-06)" in finding["fix"]
    assert finding["evidence"]["drop"] < 0.1


def test_small_split_and_a_large_unregularised_model_overfit(tmp_path):
    _, diagnosis = train(tmp_path, "overfit", mlp(10, 256, 256, 4), blobs(48, seed=1, flip=0.3),
                         blobs(256, seed=2, flip=0.3), optim={"weight_decay": 0.0}, schedule={"name": "constant"},
                         train={"epochs": 60, "batch_size": 16}, checkpoint={"enabled": True})
    assert "overfitting" in codes(diagnosis, "warn"), diagnosis
    (finding,) = [f for f in diagnosis["findings"] if f["code"] == "overfitting"]
    evidence = finding["evidence"]
    assert evidence["final_val_loss"] > evidence["best_val_loss"] and evidence["best_checkpoint_holds_it"] is True
    assert f"step {evidence['best_step']}" in finding["summary"]


def test_deep_sigmoid_stack_has_vanishing_gradients(tmp_path):
    _, diagnosis = train(tmp_path, "sigmoid", mlp(10, *[32] * 10, 4, act=nn.Sigmoid))
    assert "vanishing_gradients" in codes(diagnosis, "warn"), diagnosis
    (finding,) = [f for f in diagnosis["findings"] if f["code"] == "vanishing_gradients"]
    assert finding["evidence"]["ratio_first_to_last"] < 1e-3
    assert list(finding["evidence"]["median_grad_norm"])[0] == "0"  # the first Linear, by its module name


def test_one_unit_bottleneck_underfits(tmp_path):
    _, diagnosis = train(tmp_path, "bottleneck", mlp(10, 32, 1, 32, 4))
    assert "underfitting" in codes(diagnosis, "warn"), diagnosis


def test_slow_getitem_is_data_bound(tmp_path):
    _, diagnosis = train(tmp_path, "slow", mlp(10, 32, 4), SlowData(blobs(128, seed=1)), train={"epochs": 2})
    assert "data_bound" in codes(diagnosis, "warn"), diagnosis
    (finding,) = [f for f in diagnosis["findings"] if f["code"] == "data_bound"]
    assert finding["evidence"]["data_wait_share"] > 0.5 and "data.num_workers=" in finding["fix"]


def test_cli_prints_findings_and_exits_1_on_a_warning(tmp_path):
    result, _ = train(tmp_path, "low", mlp(10, 32, 4), optim={"lr": 1e-6}, train={"epochs": 3})
    out = subprocess.run([sys.executable, "-m", "torchwise", "diagnose", str(result.run_dir)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr
    assert "warn  lr_too_low:" in out.stdout and "fix: optim.lr=1e-05" in out.stdout
    out = subprocess.run([sys.executable, "-m", "torchwise", "diagnose", str(result.run_dir), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert json.loads(out.stdout)["findings"][0]["code"] == "lr_too_low"
    missing = subprocess.run([sys.executable, "-m", "torchwise", "diagnose", str(tmp_path / "nope")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and missing.stderr.startswith("error: ") and "hint: " in missing.stderr


def test_a_run_too_short_to_judge_says_so(tmp_path):
    _, diagnosis = train(tmp_path, "short", mlp(10, 32, 4), train={"epochs": 1, "max_steps": 3})
    assert [f["code"] for f in diagnosis["findings"]] == ["too_short"] and diagnosis["healthy"] is True


def test_train_prints_the_diagnosis_in_one_line_when_healthy(tmp_path):
    config = tmp_path / "digits.yaml"
    config.write_text("data: {source: digits, standardize: true}\nmodel: {name: mlp, kwargs: {hidden: [32]}}\n"
                      "optim: {lr: 0.003}\ntrain: {epochs: 3, batch_size: 64}\nlog: {progress: off}\n")
    out = subprocess.run([sys.executable, "-m", "torchwise", "train", str(config), "--run-dir", str(tmp_path / "runs")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    diagnosis = json.loads((tmp_path / "runs" / "digits" / "diagnosis.json").read_text())
    assert diagnosis["healthy"] is True
    (line,) = [line for line in out.stdout.splitlines() if line.startswith("diagnosis")]
    assert line.startswith(f"diagnosis: healthy. {diagnosis['findings'][0]['summary']}")


def test_readers_import_no_torch_and_no_user_code(tmp_path):
    result, _ = train(tmp_path, "read", mlp(10, 32, 4), train={"epochs": 2})
    code = ("import sys; from pathlib import Path; from torchwise.diagnose.run_diagnosis import diagnose_run; "
            "from torchwise.runs.report import write_report; "
            f"diagnose_run(Path({str(result.run_dir)!r})); write_report([Path({str(result.run_dir)!r})]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'tests')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
