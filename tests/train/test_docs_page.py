"""docs/resume.md runs as written, by the docs convention (COMMON): every ```python block in page
order in one namespace, and every bash line that starts with `torchwise ` as `python -m torchwise`,
both in a temp folder holding a copy of examples/; `# (exit N)` at a line's end is its exit code."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "resume.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
EXPECTED_EXIT = re.compile(r"#\s*\(exit (\d+)\)\s*$")


def blocks(kind: str) -> list[str]:
    return [body for lang, body in FENCE.findall(PAGE.read_text()) if lang == kind]


def fresh_folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    shutil.copytree(REPO / "examples", folder / "examples")
    return folder


def test_the_resume_page_runs_as_written(tmp_path, monkeypatch):
    commands = [line.strip() for body in blocks("bash") for line in body.splitlines()
                if line.strip().startswith("torchwise ")]
    assert len(commands) == 4
    folder = fresh_folder(tmp_path, "bash")
    for line in commands:
        expected = EXPECTED_EXIT.search(line)
        args = shlex.split(line, comments=True)[1:]
        done = subprocess.run([sys.executable, "-m", "torchwise", *args], cwd=folder, capture_output=True,
                              text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
        assert done.returncode == (int(expected.group(1)) if expected else 0), (line, done.stdout, done.stderr)
    config = (folder / "runs" / "digits" / "config.yaml").read_text()
    assert "epochs: 3" in config  # the extension is in the record, as the page says
    monkeypatch.chdir(fresh_folder(tmp_path, "python"))
    namespace: dict = {}
    for body in blocks("python"):
        exec(compile(body, str(PAGE), "exec"), namespace)
