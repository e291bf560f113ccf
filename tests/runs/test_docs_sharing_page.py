"""docs/sharing-runs-safely.md runs as every docs page runs (tests/test_docs_examples.py): its ```python blocks in
page order in one namespace, in a fresh folder holding a copy of examples/, printing what the
```text block after each shows. (Its `torchwise ` lines run in tests/test_docs_examples.py.)"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
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
