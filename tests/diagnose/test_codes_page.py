"""docs/diagnose.md: its table of codes is `codes.CODES`, and `diagnose --help` lists every code.
(Its examples run in tests/test_docs_examples.py, with every other page.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torchwise.diagnose.codes import CODES

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "diagnose.md"


def test_the_table_of_codes_is_the_one_in_the_code():
    text = PAGE.read_text().split("## Codes", 1)[1]
    rows = re.findall(r"^\| `(\w+)` \| (\w+) \| (.*) \|$", text, re.MULTILINE)
    assert [(code, severity, when) for code, severity, when in rows] == \
        [(code, severity, when) for code, (severity, when) in CODES.items()]


def test_every_code_a_check_emits_is_in_the_table_and_in_help():
    source = "\n".join(p.read_text() for p in (ROOT / "src" / "torchwise" / "diagnose").glob("*.py"))
    emitted = set(re.findall(r'RunFinding\(\s*"(\w+)"', source))
    assert {"failed", "nonfinite_input", "chance_level", "healthy", "too_short"} <= emitted
    assert emitted == set(CODES)
    out = subprocess.run([sys.executable, "-m", "torchwise", "diagnose", "--help"], capture_output=True, text=True,
                         timeout=120, env={"COLUMNS": "400", "PATH": "/usr/bin:/bin",  # this checkout's code:
                                           **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}})
    assert out.returncode == 0, out.stderr
    listed = re.search(r"Codes: (.*?)\.", " ".join(out.stdout.split())).group(1)
    assert [code.strip() for code in listed.split(",")] == list(CODES)


@pytest.mark.parametrize(("round_", "file", "figures"), [
    (2, "heldout2_result_2026-12-02.json", [9, 12, 3, 4]),
    (3, "heldout3_result_2026-12-02.json", [10, 12, 3, 4]),
])
def test_the_held_out_figures_are_the_measured_ones(round_, file, figures):
    """docs/diagnose.md's bold held-out row of each round is what its result file holds."""
    import json

    rows = json.loads((ROOT / "benchmarks" / "diagnose_planted" / file).read_text())
    sick = [r for r in rows if r["expected"] != "healthy"]
    well = [r for r in rows if r["expected"] == "healthy"]
    bold = r"\*\*(\d+) of (\d+)\*\*"
    row = re.search(rf"^\| \*\*held-out {round_}, measured once.*\| {bold} \| {bold} \|", PAGE.read_text(),
                    re.MULTILINE)
    assert row is not None
    assert [int(g) for g in row.groups()] == [sum(r["ok"] for r in sick), len(sick), sum(r["ok"] for r in well),
                                              len(well)] == figures
    assert not any(r["unquoted"] for r in rows)
