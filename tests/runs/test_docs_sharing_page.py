"""docs/sharing-runs-safely.md runs as the docs convention says (COMMON.md): its ```python blocks in
page order in one namespace, in a fresh folder holding a copy of examples/, printing what the
```text block after each shows; the `torchwise ` lines of its ```bash blocks in one folder, each
ending with the exit code its `# (exit N)` comment says (0 without one)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "sharing-runs-safely.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    return BLOCK.findall(PAGE.read_text())


def test_the_python_blocks_print_what_the_page_shows(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    found = blocks()
    ran = 0
    for index, (kind, text) in enumerate(found):
        if kind != "python":
            continue
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(text, f"{PAGE.name} block {index}", "exec"), namespace)
        after = found[index + 1] if index + 1 < len(found) else ("", "")
        if after[0] == "text":
            assert printed.getvalue() == after[1], (index, printed.getvalue())
        ran += 1
    assert ran == 2


def test_the_bash_lines_end_as_the_page_says(tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    lines = [line for kind, text in blocks() if kind == "bash" for line in text.splitlines()
             if line.startswith("torchwise ")]
    assert len(lines) == 3
    for line in lines:
        command, _, comment = line.partition("#")
        expected = int(re.search(r"\(exit (\d+)\)", comment).group(1)) if comment else 0
        out = subprocess.run([sys.executable, "-m", *command.split()], cwd=tmp_path, capture_output=True, text=True,
                             env={**os.environ, "COLUMNS": "120"})
        assert out.returncode == expected, (line, out.stderr[-2000:])
