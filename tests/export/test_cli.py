"""`torchwise export` and `torchwise predict` on the command line: output, exit codes, errors."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

from .conftest import raw_digits_val_csv


def torchwise(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchwise", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def test_export_then_predict(digits_run, tmp_path):
    done = torchwise("export", digits_run, "--format", "torchscript", "--out", tmp_path / "digits.pt")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"exported {tmp_path / 'digits.pt'} (torchscript, ")
    assert lines[1] == "  inputs     input: float32 [batch, 64]"
    assert lines[2] == "  outputs    output: float32 [batch, 10] (logits of 10 classes: 0, 1, 2, ...)"
    assert lines[3].startswith("  verified   batches of 1 and 64 from the validation data of digits: max abs diff ")
    assert lines[4] == "  transform  (raw * 0.0625 - mean) / std, per feature (manifest: normalization)"
    assert lines[5] == f"  manifest   {tmp_path / 'digits.pt.json'}"
    csv_path = raw_digits_val_csv(tmp_path / "val.csv")
    summary = json.loads((digits_run / "summary.json").read_text())

    done = torchwise("predict", tmp_path / "digits.pt", csv_path, "--batch-size", "100")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))  # predictions on stdout, the summary on stderr
    assert len(rows) == 359 and list(rows[0]) == ["id", "prediction", "probability"]
    report = done.stderr.splitlines()
    assert report[0] == f"predicted 359 samples with {tmp_path / 'digits.pt'}"
    assert report[1] == f"accuracy {summary['best']['value']:.4f} against the input's labels"
    assert "samples/s; latency per batch of 100: p50 " in report[2]

    done = torchwise("predict", digits_run, csv_path, "--out", tmp_path / "p.json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"predicted 359 samples with {digits_run} -> {tmp_path / 'p.json'}"
    assert len(json.loads((tmp_path / "p.json").read_text())) == 359


def test_bad_input_is_an_error_with_a_hint(digits_run, tmp_path):
    (tmp_path / "short.csv").write_text("a,b\n1,2\n")
    done = torchwise("predict", digits_run, tmp_path / "short.csv")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"error: {tmp_path / 'short.csv'} has 2 columns; the model expects 64 features "
        "(pixel_0_0, pixel_0_1, pixel_0_2, ..., pixel_7_7)",
        "hint: give a header row naming the feature columns (other columns are ignored), or exactly one column "
        "per feature"]
    done = torchwise("export", tmp_path, "--format", "onnx")
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == f"error: {tmp_path} is not a torchwise run folder (no config.yaml)"
    done = torchwise("export", digits_run, "--format", "tflite")
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["error: unknown export format 'tflite'",
                                        "hint: use one of: exported, torchscript, onnx"]
