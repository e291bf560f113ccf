"""Issue 21's new public scripts: the worked half is a regression floor; the held-out half is
only checked for its shape here (it was measured once, by benchmarks/lint_recall.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from . import bench

HERE = Path(__file__).parent
WORKED, HELD_OUT = HERE / "worked21", HERE / "heldout21"
_SOURCE = re.compile(
    r"^# Source: (?P<url>https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+\.py)\n"
    r"# Licence: (MIT|BSD-2-Clause|BSD-3-Clause|Apache-2\.0), "
)
KINDS = {"eval-grad", "resume-partial", "whole-module-save", "data0", "next-exhausted", "unguarded-cuda", "other"}


@pytest.mark.parametrize("folder, scripts", [(WORKED, 25), (HELD_OUT, 20)], ids=["worked", "held-out"])
def test_each_script_names_its_source_and_has_a_verdict(folder, scripts):
    found = sorted(folder.glob("*.py"))
    assert len(found) == scripts
    for script in found:
        header = _SOURCE.match(script.read_text(encoding="utf-8"))
        assert header, script.name
        verdict = json.loads(script.with_suffix(".json").read_text(encoding="utf-8"))
        assert verdict["source"] == header["url"]
        assert all(bug["kind"] in KINDS and bug["lines"] and bug["why"] for bug in verdict["bugs"])


def test_no_repository_is_in_both_halves():
    def repositories(folder: Path) -> set[str]:
        return {_SOURCE.match(s.read_text(encoding="utf-8"))["url"].split("/")[4] for s in folder.glob("*.py")}

    assert repositories(WORKED).isdisjoint(repositories(HELD_OUT))


def test_worked_half_stays_at_its_floor():
    result = bench.load("lint_recall").measure(WORKED)
    assert result["unjudged"] == [], "judge new findings in the script's verdict file"
    assert (result["bugs"], len(result["found"])) == (28, 16)
    assert (result["warnings+errors"], len(result["right"])) == (25, 24)
