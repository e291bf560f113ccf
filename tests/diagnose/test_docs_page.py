"""docs/diagnose.md: its examples run (the docs convention: python blocks in one namespace, bash
lines that start with `torchwise ` as `python -m torchwise`, in a temp folder holding a copy of
examples/), its table of codes is `codes.CODES`, and `diagnose --help` lists every code."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchwise.diagnose.codes import CODES

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "diagnose.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def blocks(kind: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(PAGE.read_text()) if lang == kind]


def folder_with_examples(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(ROOT / "examples", folder / "examples")
    return folder


def test_the_pages_python_runs_in_page_order(tmp_path, monkeypatch):
    monkeypatch.chdir(folder_with_examples(tmp_path, "python"))
    namespace: dict = {}
    code = blocks("python")
    assert code, "the page shows Python"
    for body in code:
        exec(compile(body, str(PAGE), "exec"), namespace)  # noqa: S102 - the page's own example


@pytest.mark.slow  # trains the digits example for 8 epochs (over a minute on a busy machine)
def test_the_pages_commands_run_and_exit_as_the_page_says(tmp_path):
    folder = folder_with_examples(tmp_path, "bash")
    lines = [line for body in blocks("bash") for line in body.splitlines() if line.startswith("torchwise ")]
    assert len(lines) >= 3
    for line in lines:
        command, _, comment = line.partition("#")
        expected = re.match(r"\s*\(exit (\d+)", comment)
        out = subprocess.run([sys.executable, "-m", "torchwise", *command.split()[1:]], cwd=folder,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == (int(expected.group(1)) if expected else 0), (line, out.stdout, out.stderr)


def test_the_table_of_codes_is_the_one_in_the_code():
    text = PAGE.read_text().split("## Codes", 1)[1]
    rows = re.findall(r"^\| `(\w+)` \| (\w+) \| (.*) \|$", text, re.MULTILINE)
    assert [(code, severity, when) for code, severity, when in rows] == \
        [(code, severity, when) for code, (severity, when) in CODES.items()]


def test_every_code_a_check_emits_is_in_the_table_and_in_help():
    source = "\n".join(p.read_text() for p in (ROOT / "src" / "torchwise" / "diagnose").glob("*.py"))
    emitted = set(re.findall(r'RunFinding\(\s*"(\w+)"', source))
    assert {"failed", "nonfinite_input", "chance_level", "healthy", "too_short"} <= emitted
    assert emitted == set(CODES)
    out = subprocess.run([sys.executable, "-m", "torchwise", "diagnose", "--help"], capture_output=True, text=True,
                         timeout=120, env={"COLUMNS": "400", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    listed = re.search(r"Codes: (.*?)\.", " ".join(out.stdout.split())).group(1)
    assert [code.strip() for code in listed.split(",")] == list(CODES)
