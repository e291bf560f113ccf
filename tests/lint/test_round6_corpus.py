"""Issue 21, round 6's public scripts: the working half is a regression floor; the held-out half
was measured once, by benchmarks/lint_recall.py, and is checked here for its shape and that figure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from . import bench
from .test_issue21_corpus import _SOURCE, KINDS, _repositories

HERE = Path(__file__).parent
WORKED_6, HELD_OUT_6 = HERE / "worked6", HERE / "heldout6"
EARLIER = (
    "worked21", "heldout21", "heldout21b", "worked3", "heldout3", "worked4", "heldout4", "worked5", "heldout5",
    "real", "corpus",
)


def _named_in(folder: Path) -> set[str]:
    """Every GitHub repository a script's header in the folder (or below it) names, lower-cased."""
    heads = (script.read_text(encoding="utf-8")[:400] for script in folder.rglob("*.py"))
    return {repo.lower() for head in heads for repo in re.findall(r"github\.com/([\w.-]+/[\w.-]+)", head)}


@pytest.mark.parametrize("folder, scripts", [(WORKED_6, 24), (HELD_OUT_6, 26)], ids=["worked-6", "held-out-6"])
def test_each_script_names_its_source_and_its_verdict_names_the_same(folder, scripts):
    verdicts = {s.name: json.loads(s.with_suffix(".json").read_text(encoding="utf-8")) for s in folder.glob("*.py")}
    headers = {name: _SOURCE.match((folder / name).read_text(encoding="utf-8")) for name in verdicts}
    assert len(verdicts) == scripts and all(headers.values()), [n for n, h in headers.items() if not h]
    assert {n: v["source"] for n, v in verdicts.items()} == {n: h["url"] for n, h in headers.items()}
    bugs = [bug for verdict in verdicts.values() for bug in verdict["bugs"]]
    assert all(bug["kind"] in KINDS and bug["lines"] and bug["why"] for bug in bugs)


def test_round6_halves_share_no_repository_with_each_other_or_any_earlier_corpus():
    held, worked = _repositories(HELD_OUT_6), _repositories(WORKED_6)
    assert (len(held), len(worked)) == (18, 18) and held.isdisjoint(worked)
    earlier = set().union(*(_named_in(HERE / name) for name in EARLIER))
    assert not {r.lower() for r in held | worked} & earlier


def test_round6_working_half_stays_at_its_floor():
    result = bench.load("lint_recall").measure(WORKED_6)
    assert [u for u in result["unjudged"] if u["level"] != "info"] == [], "judge them in the script's verdict file"
    # Before the round's changes (rules of 6510981): 23 of 43 found, 37 of 39 right.
    # Round 7: TW147 finds Informer's test split that drops its last batch, and warns (judged right in
    # worked6/findings.json) on glow-tts' validation loader of the same shape.
    assert (result["bugs"], len(result["found"])) == (43, 39)
    assert (result["warnings+errors"], len(result["right"])) == (51, 51)


def test_round6_held_out_half_as_measured_once():
    # Measured once at 376e3a3 (the merge of round 6's rules; python benchmarks/lint_recall.py
    # tests/lint/heldout6), its findings off a bug's line judged afterwards in
    # heldout6/findings.json: 9 of 23 found (8 by a finding that names its bug: TW110's info on
    # PlaNet's pickled experience replay lands on that bug's line but speaks of map_location),
    # 6 of 9 warnings and errors right; neither target (60%, 95%) met. The three wrong: TW104 on
    # DrQA's two validation loops (model.predict runs under no_grad in another file), TW125 on
    # fast-autoaugment's resume (the 'ema' it saves is a dict of tensors, never a module).
    # The rules have changed since (see the floor below), so the measurement is checked as recorded:
    # the verdicts judged in findings.json and the row of docs/lint.md.
    judged = json.loads((HELD_OUT_6 / "findings.json").read_text(encoding="utf-8"))
    bugs = [b for v in HELD_OUT_6.glob("*.json") if v.name != "findings.json" for b in _verdict(v)["bugs"]]
    assert len(bugs) == 23
    wrong = sorted((name.split("__")[0], row["line"], row["code"]) for name, rows in judged.items() for row in rows
                   if not row["verdict"])
    # PlaNet's TW110 is an info on a judged bug's line that does not name it; the other three warned.
    assert wrong == [("Kaixhin_PlaNet", 89, "TW110"), ("facebookresearch_DrQA", 257, "TW104"),
                     ("facebookresearch_DrQA", 298, "TW104"), ("kakaobrain_fast_autoaugment", 197, "TW125")]
    row = "| round 6: sixth held-out set, measured once (2026-12-02, 376e3a3) | 26 | 23 | 9 (39%; 8 naming their bug) |"
    assert f"{row} 9 | 6 | 67% |" in (HERE.parents[1] / "docs" / "lint.md").read_text(encoding="utf-8")


def _verdict(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_round6_held_out_half_stays_at_its_floor():
    # Worked on after the measurement as a regression floor: its three wrong warnings are gone
    # (TW104 wants the object whose method runs on the batch shown to be a module; TW125 reads an
    # entry this file only ever saves as a state dict as no module), nothing found was lost.
    result = bench.load("lint_recall").measure(HELD_OUT_6)
    assert [u for u in result["unjudged"] if u["level"] != "info"] == [], "judge them in the folder's findings.json"
    # round 7 (lint7a): 4 more found, each by a warning on its bug's line (TW132 on powerful-gnns'
    # pass_data_iteratively and fast-autoaugment's --only-eval pass, TW131 on RFBNet's and SASRec's resumes)
    # round 8 (lint8b): TW150 finds DrQA's best_valid restarting at 0 after the --checkpoint resume;
    # TW150/TW151 add fast-autoaugment's best_top1 reset and its saved epoch trained again, and TW132
    # powerful-gnns' two pass_data_iteratively calls after eval() (judged right in findings.json or
    # on a judged bug's line).
    # TW152 finds RFBNet's step_index starting at 0 after --resume_epoch; TW155 (info) the two
    # validations awesome-semantic-segmentation shards across ranks and never reduces.
    assert (result["bugs"], len(result["found"])) == (23, 17)
    assert (result["warnings+errors"], len(result["right"])) == (16, 16)
