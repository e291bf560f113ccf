"""`diagnose` on the planted runs of benchmarks/diagnose_planted: a few fast ones by their code
and evidence, and (slow) every one of both halves for the numbers its findings quote."""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys

import pytest
from benchmarks.diagnose_planted.measure import train_case
from tests.diagnose.quoted_numbers import unquoted

from torchwise.diagnose.run_diagnosis import diagnose_run


def planted(tmp_path, name: str, half: str = "dev"):
    build = importlib.import_module(f"benchmarks.diagnose_planted.{half}").CASES[name][1]
    run_dir = train_case(tmp_path, name, build)
    diagnosis = diagnose_run(run_dir).to_json()
    for finding in diagnosis["findings"]:
        assert unquoted(finding, run_dir) == [], finding
    return run_dir, diagnosis


def test_a_failed_run_reads_failed_first_and_exits_1(tmp_path):
    run_dir, diagnosis = planted(tmp_path, "truncated_file")
    first = diagnosis["findings"][0]
    assert first["code"] == "failed" and first["severity"] == "error"
    assert "too_short" not in [f["code"] for f in diagnosis["findings"]]
    assert first["evidence"]["reason"].startswith("OSError: image file is truncated")
    assert first["summary"].startswith(f"the run failed at step {first['evidence']['step']}: OSError")
    out = subprocess.run([sys.executable, "-m", "torchwise", "diagnose", str(run_dir)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 1 and "error failed: the run failed at step" in out.stdout


def test_an_imbalanced_classifier_is_judged_against_its_labels_entropy(tmp_path):
    _, diagnosis = planted(tmp_path, "imbalanced_noise_binary")
    (chance,) = [f for f in diagnosis["findings"] if f["code"] == "chance_level"]
    evidence = chance["evidence"]
    assert evidence["num_classes"] == 2 and evidence["majority_share"] == pytest.approx(461 / 512, abs=1e-4)
    p = 461 / 512
    assert evidence["prior_entropy"] == pytest.approx(-(p * math.log(p) + (1 - p) * math.log(1 - p)), abs=1e-4)
    assert evidence["final_train_loss"] > 0.9 * evidence["prior_entropy"]


def test_a_user_scheduler_at_lr_20_is_quoted_as_20(tmp_path):
    run_dir, diagnosis = planted(tmp_path, "user_sched_lr20_adamw")
    (finding,) = [f for f in diagnosis["findings"] if f["code"] == "lr_too_high"]
    assert "the logged LR peaked at 20, set by your scheduler" in finding["fix"]
    assert "optim.lr=" not in finding["fix"]  # optim.lr (0.001) is not what ran
    assert finding["evidence"]["logged_lr_peak"] == pytest.approx(20.0)


def test_nan_in_the_inputs_names_the_data_before_the_lr(tmp_path):
    run_dir, diagnosis = planted(tmp_path, "nan_feature")
    first = diagnosis["findings"][0]
    assert first["code"] == "nonfinite_input" and first["evidence"]["inputs_finite"] is False
    assert first["evidence"]["module"] == "0" and "lower" not in first["fix"]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert any(e["event"] == "nonfinite" and e["inputs_finite"] is False for e in events)


def test_a_frozen_model_and_a_frozen_backbone_that_learns(tmp_path):
    run_dir, diagnosis = planted(tmp_path, "frozen_cnn")
    facts = json.loads((run_dir / "facts.json").read_text())
    assert facts["parameters"] == {"trainable": 8, "frozen": 1308}  # the first conv's 8 biases train
    assert [f["code"] for f in diagnosis["findings"] if f["severity"] != "info"] == ["mostly_frozen"]
    _, diagnosis = planted(tmp_path, "healthy_frozen_backbone")
    assert diagnosis["healthy"], diagnosis


ALL = [(half, name) for half in ("dev", "heldout", "dev2", "heldout2", "dev3")  # heldout3: measured once, not here
       for name in importlib.import_module(f"benchmarks.diagnose_planted.{half}").CASES]


@pytest.mark.slow
@pytest.mark.parametrize(("half", "name"), ALL, ids=[f"{h}-{n}" for h, n in ALL])
def test_every_planted_run_quotes_only_numbers_of_its_record(tmp_path, half, name):
    """Every number in every why/fix is in the record (or the finding's evidence), on all planted
    runs; the codes themselves are the benchmark's figure, not asserted here."""
    planted(tmp_path, name, half)
