"""Issue 21, round 5's public scripts: the working half is a regression floor; the held-out half
was measured once, by benchmarks/lint_recall.py, and is checked here for its shape and that figure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from . import bench
from .test_issue21_corpus import _SOURCE, KINDS

HERE = Path(__file__).parent
WORKED_5, HELD_OUT_5 = HERE / "worked5", HERE / "heldout5"
EARLIER = ("worked21", "heldout21", "heldout21b", "worked3", "heldout3", "worked4", "heldout4", "real", "corpus")


def _repositories(folder: Path) -> set[str]:
    return {"/".join(_SOURCE.match(s.read_text(encoding="utf-8"))["url"].split("/")[3:5]) for s in folder.glob("*.py")}


@pytest.mark.parametrize("folder, scripts", [(WORKED_5, 19), (HELD_OUT_5, 27)], ids=["worked-5", "held-out-5"])
def test_each_script_names_its_source_and_has_a_verdict(folder, scripts):
    found = sorted(folder.glob("*.py"))
    assert len(found) == scripts
    for script in found:
        header = _SOURCE.match(script.read_text(encoding="utf-8"))
        assert header, script.name
        verdict = json.loads(script.with_suffix(".json").read_text(encoding="utf-8"))
        assert verdict["source"] == header["url"]
        assert all(bug["kind"] in KINDS and bug["lines"] and bug["why"] for bug in verdict["bugs"])


def test_round5_halves_share_no_repository_with_each_other_or_any_earlier_corpus():
    earlier = set()
    for name in EARLIER:
        for script in (HERE / name).rglob("*.py"):
            head = script.read_text(encoding="utf-8")[:400]
            earlier |= {r.lower() for r in re.findall(r"github\.com/([\w.-]+/[\w.-]+)", head)}
    held, worked = _repositories(HELD_OUT_5), _repositories(WORKED_5)
    assert (len(held), len(worked)) == (16, 15)
    assert held.isdisjoint(worked)
    assert not {r.lower() for r in held | worked} & earlier


def test_round5_working_half_stays_at_its_floor():
    result = bench.load("lint_recall").measure(WORKED_5)
    assert result["unjudged"] == [], "judge new findings in the script's verdict file"
    # Before the round's changes (rules of 32fc019): 20 of 36 found, 43 of 50 right.
    assert (result["bugs"], len(result["found"])) == (36, 34)
    # Round 6 adds FixMatch's --amp resume that leaves apex's loss scale behind (TW131, judged right).
    # Round 8 (lint8b): TW151 on vision-transformers-cifar10's saved epoch, judged right in findings.json.
    assert (result["warnings+errors"], len(result["right"])) == (67, 67)


def test_round5_held_out_half_stays_at_its_floor():
    # Measured once at 683fe4f (python benchmarks/lint_recall.py tests/lint/heldout5), its
    # findings off a bug's line judged afterwards in heldout5/findings.json: 23 of 52 found,
    # 31 of 38 warnings and errors right; neither target (60%, 95%) met. Worked on in round 6 as a
    # regression floor: its seven wrong warnings are gone (TW108 on a GPU index tested against None,
    # TW132 on frozen parameters, on scoring a training batch and on an RL play loop, now info,
    # TW119 on a deployment copy), and pytorch-vdsr's two whole-module loads and its test loop found,
    # and SimCLR's unguarded x_i.cuda() (its set_device binds the multi-node branch only).
    result = bench.load("lint_recall").measure(HELD_OUT_5)
    assert [u for u in result["unjudged"] if u["level"] != "info"] == [], "judge them in the folder's findings.json"
    # Round 7: TW147 finds SimCLR linear_evaluation.py's test loader that drops its last batch; wgan-gp's
    # gan_mnist.py, a Python 2 file, is read with its print statements parenthesised: TW132 finds its
    # volatile sample generation, and TW144 / TW136 name the Python 2 lines judged there.
    # Round 8 (lint8b): TW154 finds SimCLR's scheduler stepped on node 0 only and deepspeech.pytorch's
    # anneal on the main process only; TW150 on deepspeech's best_wer and melgan's best_mel_reconst
    # after their resumes, judged right in findings.json.
    # Round 9 (lint9b): TW131 (info) finds SimCLR main.py's --reload, which restores the weights while
    # the optimizer comes from load_optimizer() of another file and is never restored here (line 111),
    # and maskrcnn-benchmark's DetectronCheckpointer(...).load, built without apex amp's scale (line 68).
    assert (result["bugs"], len(result["found"])) == (52, 33)
    assert (result["warnings+errors"], len(result["right"])) == (46, 46)
