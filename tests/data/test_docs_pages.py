"""The ecosystem pages (docs/detection.md, docs/huggingface.md) run as the docs convention says:
every ```python block in page order in one namespace, then every bash line that starts with
`torchwise ` (as `python -m torchwise`), each page in a fresh folder holding a copy of examples/."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
EXIT = re.compile(r"#\s*\(exit (\d+)\)\s*$")


def run_page(page: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "examples", folder / "examples")
    monkeypatch.chdir(folder)
    blocks = BLOCK.findall(page.read_text())
    namespace: dict = {"__name__": "__docs__"}
    for kind, code in blocks:
        if kind == "python":
            exec(compile(code, f"{page.name}", "exec"), namespace)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    for kind, code in blocks:
        if kind != "bash":
            continue
        for line in code.splitlines():
            if not line.startswith("torchwise "):
                continue
            wanted = EXIT.search(line)
            command = EXIT.sub("", line).split()[1:]
            done = subprocess.run([sys.executable, "-m", "torchwise", *command], capture_output=True, text=True,
                                  env=env)
            assert done.returncode == (int(wanted.group(1)) if wanted else 0), (line, done.stdout, done.stderr)


@pytest.mark.slow  # three small fits: over a minute on a busy machine
def test_the_detection_page_runs(tmp_path, monkeypatch):
    run_page(ROOT / "docs" / "detection.md", tmp_path, monkeypatch)


@pytest.mark.slow
def test_the_huggingface_page_runs(tmp_path, monkeypatch):
    run_page(ROOT / "docs" / "huggingface.md", tmp_path, monkeypatch)
