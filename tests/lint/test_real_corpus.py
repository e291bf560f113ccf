"""Lint on public training scripts nobody here wrote, against verdicts judged by hand.

``tests/lint/real/verdicts.json`` holds one verdict per finding (read from the code around
it): a judged-true finding must stay, a false alarm fixed once must not come back, and a new
finding must be judged before it lands. The precision table is benchmarks/lint_precision.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from . import bench

REAL = Path(__file__).parent / "real"
SCRIPTS = sorted(REAL.glob("*.py"))
_SOURCE = re.compile(
    r"^# Source: https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+\.py\n"
    r"# Licence: (MIT|BSD-3-Clause|Apache-2\.0), "
)


@pytest.fixture(scope="module")
def judged():
    precision = bench.load("lint_precision")
    return precision, precision.current_findings(REAL), precision.load_verdicts(REAL)


def test_corpus_is_public_permissive_code_with_its_source():
    assert len(SCRIPTS) >= 50
    for script in SCRIPTS:
        assert _SOURCE.match(script.read_text(encoding="utf-8")), script.name


def test_every_finding_is_judged(judged):
    _, findings, verdicts = judged
    reported = {key for key, v in verdicts.items() if v["status"] == "reported"}
    assert sorted(set(findings) - reported) == [], "new findings: judge them in verdicts.json"


def test_judged_true_findings_stay(judged):
    _, findings, verdicts = judged
    kept = {key for key, v in verdicts.items() if v["verdict"] and v["status"] == "reported"}
    assert sorted(kept - set(findings)) == []


def test_fixed_false_alarms_do_not_come_back(judged):
    _, findings, verdicts = judged
    fixed = {key for key, v in verdicts.items() if v["status"] == "fixed"}
    assert all(not verdicts[key]["verdict"] for key in fixed)
    assert sorted(fixed & set(findings)) == []
    # The shapes issue 13 lists are among them: n_critic, guarded .cuda(), the else-branch clip.
    assert {key[2] for key in fixed} >= {"TW103", "TW106", "TW107", "TW108", "TW116", "TW119", "TW122"}


def test_known_false_alarms_are_still_the_known_ones(judged):
    _, findings, verdicts = judged
    known = {key for key, v in verdicts.items() if not v["verdict"] and v["status"] == "reported"}
    assert known <= set(findings), "a known false alarm is gone: mark it fixed in verdicts.json"


def test_precision_meets_the_bar(judged):
    bench, findings, verdicts = judged
    result = bench.precision_table(findings, verdicts)
    assert result["unjudged"] == []
    assert result["totals"]["warnings+errors"]["precision"] >= 0.95
    assert result["totals"]["all"]["precision"] >= 0.90
    assert result["totals"]["all"]["findings"] == len(findings) >= 100


def test_docs_page_shows_the_table_the_benchmark_prints(judged):
    precision, findings, verdicts = judged
    table = precision.render(precision.precision_table(findings, verdicts))
    page = (REAL.parents[2] / "docs" / "lint.md").read_text(encoding="utf-8")
    assert table.split("\n\n", 1)[1] in page
