"""docs/lint.md runs as the docs convention says (COMMON.md): every ```python block in page
order in one namespace, in a fresh folder holding a copy of examples/; every bash line that
starts with `torchwise ` as `python -m torchwise ...` in one folder per page, with the exit
code its `# (exit N)` comment names (0 without one)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "lint.md"
_BLOCK = re.compile(r"^```(?P<lang>\w+)\n(?P<body>.*?)^```", re.S | re.M)
_EXIT = re.compile(r"#\s*\(exit (\d+)\)\s*$")


def _blocks(lang: str) -> list[str]:
    return [m["body"] for m in _BLOCK.finditer(PAGE.read_text(encoding="utf-8")) if m["lang"] == lang]


def _folder_with_examples(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(ROOT / "examples", folder / "examples")
    return folder


def test_python_blocks_run_in_page_order(tmp_path, monkeypatch):
    blocks = _blocks("python")
    assert blocks, "the page shows no Python"
    monkeypatch.chdir(_folder_with_examples(tmp_path, "python"))
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)


def test_bash_torchwise_lines_exit_as_marked(tmp_path):
    folder = _folder_with_examples(tmp_path, "bash")
    lines = [line for block in _blocks("bash") for line in block.splitlines() if line.startswith("torchwise ")]
    assert lines, "the page runs no command"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for line in lines:
        match = _EXIT.search(line)
        want = int(match.group(1)) if match else 0
        command = line[: match.start()] if match else line.split(" #")[0]
        args = command.split()[1:]
        done = subprocess.run([sys.executable, "-m", "torchwise", *args], cwd=folder, env=env, capture_output=True)
        assert done.returncode == want, (line, done.stdout, done.stderr)
