"""The doctor page (docs/doctor.md) stays true: it lists every check id."""

from __future__ import annotations

import re
from pathlib import Path

from torchwise.env import CHECKS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "doctor.md"


def test_the_doctor_page_lists_every_check_id():
    listed = set(re.findall(r"`([a-z0-9-]+)`", PAGE.read_text()))
    assert {check.id for check in CHECKS} <= listed


