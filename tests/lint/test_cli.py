"""``torchwise lint`` end to end: output formats, exit codes, --fix."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
BUGGY = "import torch\nmodel = Net().cuda()\ntorch.save(model, 'm.pt')\nsd = torch.load('ckpt.pt')\n"


def run_lint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-m", "torchwise", "lint", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
    )


def test_text_output_is_ruff_like_and_exits_1_on_warnings(tmp_path):
    (tmp_path / "train.py").write_text(BUGGY)
    result = run_lint("train.py", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "train.py:3:1: TW111 torch.save of the whole module model"
    assert lines[1] == "    hint: torch.save(model.state_dict(), path)"
    assert lines[2].startswith("train.py:4:6: TW110 ")
    assert lines[-1] == "Found 2 problems (0 errors, 1 warning, 1 info)."


def test_info_only_exits_0(tmp_path):
    (tmp_path / "train.py").write_text(BUGGY)
    result = run_lint("train.py", "--ignore", "TW111", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "TW110" in result.stdout


def test_json_output(tmp_path):
    (tmp_path / "train.py").write_text(BUGGY)
    result = run_lint("train.py", "--format", "json", "--select", "TW110", cwd=tmp_path)
    assert json.loads(result.stdout) == [
        {
            "code": "TW110",
            "level": "info",
            "path": "train.py",
            "line": 4,
            "col": 6,
            "message": "torch.load without map_location loads onto the device it was saved from",
            "fix": 'pass map_location="cpu" (or the target device) and keep weights_only=True',
        }
    ]


def test_sarif_output(tmp_path):
    (tmp_path / "train.py").write_text(BUGGY)
    sarif = json.loads(run_lint("train.py", "--format", "sarif", cwd=tmp_path).stdout)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["TW110", "TW111"]
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [
        ("TW111", "warning"),
        ("TW110", "note"),
    ]
    region = run["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "startColumn": 1}


def test_clean_file_passes(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\nx = torch.zeros(3)\n")
    result = run_lint(".", cwd=tmp_path)
    assert (result.returncode, result.stdout.strip()) == (0, "All checks passed.")


def test_syntax_error_exits_2_with_error_and_hint(tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n")
    result = run_lint("broken.py", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: broken.py:1:")
    assert "\nhint: " in result.stderr
    assert "Traceback" not in result.stderr


def test_a_broken_file_does_not_hide_the_others(tmp_path):
    (tmp_path / "a_broken.py").write_text("def f(:\n")
    (tmp_path / "b_broken.py").write_text("print 'python 2' %\n")  # a print statement lint cannot read
    (tmp_path / "c_train.py").write_text("import torch\ntorch.save(model, 'm.pt')\n")
    result = run_lint(".", "--format", "json", cwd=tmp_path)
    assert result.returncode == 2
    assert [f["code"] for f in json.loads(result.stdout)] == ["TW111"]  # still valid JSON
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert [e.split(":")[1].strip() for e in errors] == ["a_broken.py", "b_broken.py"]


def test_a_missing_path_does_not_stop_the_other_files(tmp_path):
    (tmp_path / "train.py").write_text(BUGGY)
    result = run_lint("train.py", "nosuchdir/", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout.splitlines()[0] == "train.py:3:1: TW111 torch.save of the whole module model"
    assert result.stderr.splitlines() == [
        "error: nosuchdir: no such file or folder",
        "hint: check the path you passed",
    ]
    fixed = run_lint("train.py", "nosuchdir/", "--fix", cwd=tmp_path)
    assert fixed.returncode == 2 and "fixed: train.py" in fixed.stderr
    assert 'map_location="cpu"' in (tmp_path / "train.py").read_text()


def test_unknown_format_exits_2(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    result = run_lint("ok.py", "--format", "xml", cwd=tmp_path)
    assert result.returncode == 2 and "error: unknown format 'xml'" in result.stderr


FIXABLE = """import torch
from torch.cuda.amp import GradScaler, autocast

scaler = GradScaler()
label = "échelle"; other = torch.cuda.amp.GradScaler(init_scale=1024)
state = torch.load("model.pt")
extra = torch.load(
    "other.pt",
    weights_only=True,
)


def step(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad(set_to_none=False)
        with autocast(dtype=torch.float16):
            loss = model(x).sum()
        with torch.cuda.amp.autocast():
            pass
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    for p in model.parameters():
        if p.grad is not None:
            p.grad.zero_()
"""


def test_fix_rewrites_amp_zero_grad_and_map_location(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(FIXABLE)
    result = run_lint("train.py", "--fix", "--select", "TW110,TW117,TW123", cwd=tmp_path)
    fixed = script.read_text()
    ast.parse(fixed)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "All checks passed."
    assert "fixed: train.py" in result.stderr
    assert "from torch.amp import GradScaler, autocast" in fixed
    assert 'scaler = GradScaler("cuda")' in fixed
    assert 'torch.amp.GradScaler("cuda", init_scale=1024)' in fixed
    assert 'with autocast("cuda", dtype=torch.float16):' in fixed
    assert 'with torch.amp.autocast("cuda"):' in fixed
    assert 'torch.load("model.pt", map_location="cpu")' in fixed
    assert 'weights_only=True, map_location="cpu"' in fixed
    assert "zero_grad(set_to_none=True)" in fixed
    assert "            p.grad = None\n" in fixed
    assert run_lint("train.py", "--select", "TW110,TW117,TW123", cwd=tmp_path).returncode == 0


def test_docs_example_output_is_real():
    root = Path(SRC).parent
    page = (root / "docs" / "lint.md").read_text()
    block = page.split("```text\n$ torchwise lint ", 1)[1].split("```", 1)[0]
    block = "$ torchwise lint " + block
    command, _, shown = block.partition("\n")
    args = command.removeprefix("$ torchwise lint ").split()
    result = run_lint(*args, cwd=root)
    assert result.stdout == shown
    assert result.returncode == 1


def test_pre_commit_hook_runs_this_command():
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((Path(SRC).parent / ".pre-commit-hooks.yaml").read_text())
    assert [(h["id"], h["entry"], h["types"]) for h in hooks] == [
        ("torchwise-lint", "torchwise lint", ["python"])
    ]
