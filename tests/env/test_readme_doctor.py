"""The README's "Check your environment" section stays true: every check id, runnable examples."""

from __future__ import annotations

import re
from pathlib import Path

from torchwise.env import CHECKS

README = Path(__file__).resolve().parents[2] / "README.md"


def section() -> str:
    text = README.read_text()
    start = text.index("## Check your environment")
    following = re.search(r"^## ", text[start + 3 :], flags=re.MULTILINE)
    return text[start : start + 3 + following.start()] if following else text[start:]


def test_readme_lists_every_check_id():
    listed = set(re.findall(r"`([a-z0-9-]+)`", section()))
    assert {check.id for check in CHECKS} <= listed


