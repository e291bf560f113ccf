"""Issue 21, round 9's held-out half: measured once, by benchmarks/lint_recall.py, at c654188 (the
merge of round 9's rules) and at ea19c87 (the freeze: the rules before the round, run with c654188's
benchmark, which maps two more kind names); checked here for its shape, that figure, and as a
regression floor from now on."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from . import bench
from .test_issue21_corpus import _SOURCE, _repositories
from .test_round6_corpus import _named_in

HERE = Path(__file__).parent
HELD_OUT_9 = HERE / "heldout9"
EARLIER = (
    "worked21", "heldout21", "heldout21b", "worked3", "heldout3", "worked4", "heldout4", "worked5", "heldout5",
    "worked6", "heldout6", "worked7", "heldout7", "worked8", "heldout8", "worked9", "real", "corpus",
)
MEASURED = (" (measured once at c654188, round 9's rules, and at ea19c87, the pre-round rules: the same"
            " finding in both; judged by hand afterwards)")


def _body(script: Path) -> str:
    return hashlib.sha256("".join(script.read_text(encoding="utf-8").splitlines(True)[3:]).encode()).hexdigest()


def test_round9_held_out_scripts_name_their_source_and_no_earlier_repository_or_file():
    verdicts = bench.load("lint_recall").load_verdicts(HELD_OUT_9)
    headers = {name: _SOURCE.match((HELD_OUT_9 / name).read_text(encoding="utf-8")) for name in verdicts}
    assert len(verdicts) == 12 and all(headers.values()), [n for n, h in headers.items() if not h]
    assert {n: v["source"] for n, v in verdicts.items()} == {n: h["url"] for n, h in headers.items()}
    assert sum(len(v["bugs"]) for v in verdicts.values()) == 15
    held = _repositories(HELD_OUT_9)
    assert len(held) == 11
    assert not {r.lower() for r in held} & set().union(*(_named_in(HERE / name) for name in EARLIER))
    # Round 8's lesson: compare file contents too (the body below the three-line header, and whole files).
    mine = {_body(s) for s in HELD_OUT_9.glob("*.py")}
    earlier = [s for name in EARLIER for s in (HERE / name).rglob("*.py")]
    whole = {hashlib.sha256(s.read_bytes()).hexdigest() for s in earlier}
    assert not mine & ({_body(s) for s in earlier} | whole)


def test_round9_held_out_half_as_measured_once():
    # Measured once (python benchmarks/lint_recall.py tests/lint/heldout9; git diff ea19c87 c654188 --
    # tests/lint/heldout9 empty), its findings judged afterwards in heldout9/findings.json by a judge who
    # wrote no rule: 5 of 15 found (3 by a finding that names its bug; 4 by a warning or an error, 1 only
    # by an info), 10 of 12 warnings and errors right: neither target (60%, 95%) met. The rules before
    # the round (ea19c87) raise the same findings: the same figures.
    judged = json.loads((HELD_OUT_9 / "findings.json").read_text(encoding="utf-8"))
    assert all(row["reason"].endswith(MEASURED) for rows in judged.values() for row in rows)
    wrong = sorted((name.split("__")[0], row["line"], row["code"]) for name, rows in judged.items() for row in rows
                   if not row["verdict"])
    # The two wrong warnings (TW133's KeyError on a resume whose optimizer state brings 'initial_lr'
    # back; TW104 on an evaluation whose attributions need gradients) and nine wrong infos.
    assert wrong == [
        ("CentauriStar_Rotation-Invariant-Point-Cloud-Analysis", 156, "TW133"),
        ("CentauriStar_Rotation-Invariant-Point-Cloud-Analysis", 214, "TW132"),
        ("CentauriStar_Rotation-Invariant-Point-Cloud-Analysis", 232, "TW104"),
        ("CentauriStar_Rotation-Invariant-Point-Cloud-Analysis", 284, "TW110"),
        ("CentauriStar_Rotation-Invariant-Point-Cloud-Analysis", 293, "TW110"),
        ("NoviScl_Language-Modelling-CSE291-AS2", 154, "TW107"),
        ("Yu-Group_adaptive-wavelets", 185, "TW104"),
        ("gunjanak_Pytorch_Course", 116, "TW110"),
        ("howdrox_MRI-Analysis", 181, "TW107"), ("howdrox_MRI-Analysis", 182, "TW107"),
        ("howdrox_MRI-Analysis", 186, "TW107"),
    ]
    page = (HERE.parents[1] / "docs" / "lint.md").read_text(encoding="utf-8")
    row = "| 12 | 15 | 5 (33%; 3 naming their bug) | 12 | 10 | 83% |"
    assert f"| round 9: ninth held-out set, measured once (2026-12-02, c654188) {row}" in page
    assert f"| round 9: the same held-out set, rules before the round (ea19c87) {row}" in page
    readme = (HERE.parents[1] / "README.md").read_text(encoding="utf-8")
    assert ("| `lint`: judged real bugs found / warnings right, round 9 | 5 of 15 (33%; 3 naming their bug)"
            " / 10 of 12 (83%) | 11 of 19 / 24 of 24 |") in readme


def test_round9_held_out_half_stays_at_its_floor():
    result = bench.load("lint_recall").measure(HELD_OUT_9)
    assert [u for u in result["unjudged"] if u["level"] != "info"] == [], "judge them in the folder's findings.json"
    # Measured once: 5 of 15 found. lint9a saw one line of the point-cloud trainer's verdict (its
    # loss-accumulated-with-graph bug) before building TW160; that bug is missed: 5 of 14 without it.
    assert (result["bugs"], len(result["found"])) == (15, 5)
    assert (result["warnings+errors"], len(result["right"])) == (12, 10)
