"""docs/sweep.md runs as the docs convention says (COMMON.md): its ```python blocks in page order in
one namespace, and every `torchwise ...` line of its ```bash blocks as `python -m torchwise ...`,
each kind in a fresh folder holding a copy of examples/; `# (exit N)` at a line's end is the code
it must end with. Slow: the page's sweeps train (tiny ones, a minute on a busy machine)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "sweep.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", PAGE.read_text(), flags=re.MULTILINE | re.DOTALL)


def fresh_folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    shutil.copytree(ROOT / "examples", folder / "examples")
    return folder


@pytest.mark.slow
def test_the_page_runs(tmp_path):
    python_blocks = blocks("python")
    assert len(python_blocks) == 2
    folder = fresh_folder(tmp_path, "python")
    namespace: dict = {}
    here = Path.cwd()
    os.chdir(folder)
    try:
        for code in python_blocks:
            exec(compile(code, str(PAGE), "exec"), namespace)
    finally:
        os.chdir(here)

    folder = fresh_folder(tmp_path, "bash")
    lines = [line for block in blocks("bash") for line in block.splitlines() if line.startswith("torchwise ")]
    assert len(lines) == 6
    for line in lines:
        expected = re.search(r"#\s*\((?:exit )?(\d+)\)\s*$", line)
        command = shlex.split(line.split("#")[0])
        out = subprocess.run([sys.executable, "-m", "torchwise", *command[1:]], cwd=folder,
                             capture_output=True, text=True, timeout=900)
        assert out.returncode == (int(expected.group(1)) if expected else 0), (line, out.stdout, out.stderr)
    assert (folder / "runs" / "digits-sweep" / "report.html").is_file()
    assert (folder / "runs" / "digits-sweep-best" / "summary.json").is_file()
    assert (folder / "study.db").is_file()
