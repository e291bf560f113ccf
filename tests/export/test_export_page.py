"""The "Export and predict" page (docs/export.md) runs as written: train -> export -> predict -> load
the artefact in a fresh Python process; its quoted outputs are what the commands print."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "docs" / "export.md").read_text()

pytest.importorskip("onnxruntime")


def fenced(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", SECTION, flags=re.MULTILINE | re.DOTALL)


def sessions() -> dict[str, list[str]]:
    """``$ command`` -> the lines the page shows under it."""
    shown: dict[str, list[str]] = {}
    for block in fenced("text"):
        command = None
        for line in block.splitlines():
            if line.startswith("$ "):
                command = line[2:]
                shown[command] = []
            elif command is not None:
                shown[command].append(line)
    return shown


def masked(lines: list[str]) -> list[str]:
    """Timings, sizes and float noise differ between runs; the words and the layout must not."""
    return [re.sub(r"\d+", "N", line.rstrip()) for line in lines]


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    folder = tmp_path_factory.mktemp("readme-export")
    shutil.copytree(ROOT / "examples", folder / "examples")
    (script,) = fenced("sh")
    env = {**os.environ, "COLUMNS": "100", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, cwd=folder, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder, done


def contains(output: list[str], expected: list[str]) -> bool:
    width = len(expected)
    return any(output[i:i + width] == expected for i in range(len(output) - width + 1))


def test_the_walkthrough_prints_what_the_page_shows(walkthrough):
    folder, done = walkthrough
    output = masked(done.stdout.splitlines())
    shown = sessions()
    for command in ("torchwise export runs/deploy --format onnx",
                    "torchwise predict runs/deploy/export/model.onnx digits_val.csv --out predictions.csv",
                    "python - <<'EOF' ..."):
        assert contains(output, masked(shown[command])), command
    head = (folder / "predictions.csv").read_text().splitlines()[:3]
    assert masked(head) == masked(shown["head -3 predictions.csv"])


def test_predict_and_the_fresh_process_reproduce_the_runs_accuracy(walkthrough):
    folder, done = walkthrough
    best = json.loads((folder / "runs/deploy/summary.json").read_text())["best"]["value"]
    lines = done.stdout.splitlines()
    assert f"accuracy {best:.4f} against the input's labels" in lines  # torchwise predict
    assert lines[-2:] == [f"accuracy {best:.4f}", "False"]  # the fresh process, without torchwise


def test_the_quoted_error(walkthrough):
    folder, _ = walkthrough
    (command, error), = [(c, lines) for c, lines in sessions().items() if "first_columns" in c]
    rows = (folder / "digits_val.csv").read_text().splitlines()
    (folder / "first_columns.csv").write_text("\n".join(",".join(row.split(",")[:3]) for row in rows) + "\n")
    out = subprocess.run([sys.executable, "-m", *command.split()], capture_output=True, text=True, cwd=folder)
    assert out.returncode == 2
    assert out.stderr.splitlines() == error


@pytest.mark.parametrize("command", ["torchwise export --help", "torchwise predict --help"])
def test_the_quoted_help(command):
    out = subprocess.run([sys.executable, "-m", *command.split()], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "100"})
    assert out.returncode == 0
    lines = [line.rstrip() for line in out.stdout.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    expected = sessions()[command]
    while lines and not lines[-1]:
        lines.pop()
    while expected and not expected[-1]:
        expected.pop()
    assert lines == expected
