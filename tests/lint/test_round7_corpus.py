"""Issue 21, round 7's public scripts: the working half is a regression floor; the held-out half
was measured once, by benchmarks/lint_recall.py, and is checked here for its shape and that figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import bench
from .test_issue21_corpus import _SOURCE, KINDS, _repositories
from .test_round6_corpus import _named_in

HERE = Path(__file__).parent
WORKED_7, HELD_OUT_7 = HERE / "worked7", HERE / "heldout7"
EARLIER = (
    "worked21", "heldout21", "heldout21b", "worked3", "heldout3", "worked4", "heldout4", "worked5", "heldout5",
    "worked6", "heldout6", "real", "corpus",
)
# Kinds round 7's collector named that no earlier round had (its other names are read as the
# earlier kinds through lint_recall's ALIASES).
NEW_KINDS = {"resume-from-best", "no-set-epoch-in-distributed-sampler", "scheduler-before-optimizer"}
MEASURED = " (measured once at 13572cd, judged by hand afterwards)"


@pytest.mark.parametrize("folder, scripts", [(WORKED_7, 23), (HELD_OUT_7, 25)], ids=["worked-7", "held-out-7"])
def test_each_script_names_its_source_and_its_verdict_names_the_same(folder, scripts):
    verdicts = bench.load("lint_recall").load_verdicts(folder)
    headers = {name: _SOURCE.match((folder / name).read_text(encoding="utf-8")) for name in verdicts}
    assert len(verdicts) == scripts and all(headers.values()), [n for n, h in headers.items() if not h]
    assert {n: v["source"] for n, v in verdicts.items()} == {n: h["url"] for n, h in headers.items()}
    bugs = [bug for verdict in verdicts.values() for bug in verdict["bugs"]]
    assert all(bug["kind"] in KINDS | NEW_KINDS and bug["lines"] and bug["why"] for bug in bugs)


def test_round7_halves_share_no_repository_with_each_other_or_any_earlier_corpus():
    held, worked = _repositories(HELD_OUT_7), _repositories(WORKED_7)
    assert (len(held), len(worked)) == (19, 19) and held.isdisjoint(worked)
    earlier = set().union(*(_named_in(HERE / name) for name in EARLIER))
    assert not {r.lower() for r in held | worked} & earlier


def test_round7_working_half_stays_at_its_floor():
    result = bench.load("lint_recall").measure(WORKED_7)
    assert [u for u in result["unjudged"] if u["level"] != "info"] == [], "judge them in the folder's findings.json"
    # Before the round's changes (rules of a5b234b, re-measured 2026-12-02 by the round's judge):
    # 18 of 36 found, 26 of 27 warnings and errors right (the wrong one TW116 on Towards-Realtime-MOT).
    # Round 8 (lint8b): TW151 finds two-stream's saved epoch trained again; TW150 on pytorch-semseg's
    # best_iou and TW132 on pixel-cnn-pp's sample() call judged right in findings.json.
    assert (result["bugs"], len(result["found"])) == (36, 27)
    assert (result["warnings+errors"], len(result["right"])) == (42, 42)


def _judged() -> dict[str, list[dict]]:
    return json.loads((HELD_OUT_7 / "findings.json").read_text(encoding="utf-8"))


def test_round7_held_out_half_as_measured_once():
    # Measured once at 13572cd (the merge of round 7's rules; python benchmarks/lint_recall.py
    # tests/lint/heldout7, the folder's sha256 unchanged since a502d37), its findings off a bug's
    # line judged afterwards in heldout7/findings.json by a judge who wrote no rule: 16 of 33 found
    # (11 by a finding that names its bug), 18 of 22 warnings and errors right; neither target
    # (60%, 95%) met. With the rules before the round (a5b234b): the same 16, 17 of 20 right.
    bugs = [b for v in bench.load("lint_recall").load_verdicts(HELD_OUT_7).values() for b in v["bugs"]]
    assert len(bugs) == 33
    judged = _judged()
    assert all(row["reason"].endswith(MEASURED) for rows in judged.values() for row in rows)
    wrong = sorted((name.split("__")[0], row["line"], row["code"]) for name, rows in judged.items() for row in rows
                   if not row["verdict"])
    # The four warnings wrong (TW131, TW103, TW132, TW130), and two TW110 infos that are wrong where
    # they land (a CUDA-only reload, a reload in the same run) on a bug they do not name.
    assert wrong == [
        ("floodsung_LearningToCompare_FSL", 153, "TW131"), ("floodsung_LearningToCompare_FSL", 230, "TW103"),
        ("huggingface_pytorch_openai_transformer_lm", 120, "TW132"),
        ("naoto0804_pytorch_inpainting_with_partial_conv", 113, "TW130"),
        ("rosinality_vq_vae_2_pytorch", 104, "TW110"), ("yandex_research_tabular_dl_revisiting_models", 269, "TW110"),
    ]
    # The findings behind the five counted finds that speak of something else than the bug on whose line they land.
    not_naming = sorted((name.split("__")[0], row["line"], row["code"]) for name, rows in judged.items()
                        for row in rows if "not name" in row["reason"] or "without naming" in row["reason"])
    assert not_naming == [
        ("chrischute_real_nvp", 128, "TW119"),
        ("ctallec_world_models", 44, "TW110"), ("ctallec_world_models", 67, "TW110"),
        ("rosinality_vq_vae_2_pytorch", 104, "TW110"), ("rosinality_vq_vae_2_pytorch", 155, "TW119"),
        ("yandex_research_tabular_dl_revisiting_models", 269, "TW110"), ("zhunzhong07_Random_Erasing", 164, "TW110"),
    ]
    page = (HERE.parents[1] / "docs" / "lint.md").read_text(encoding="utf-8")
    found = "| 25 | 33 | 16 (48%; 11 naming their bug) |"
    assert f"| round 7: seventh held-out set, measured once (2026-12-02, 13572cd) {found} 22 | 18 | 82% |" in page
    assert f"| round 7: the same held-out set, rules before the round (a5b234b) {found} 20 | 17 | 85% |" in page


def test_round7_held_out_half_now():
    # The rules as measured gave 16 found, 18 of 22 right (above). After the measurement
    # (tests/lint/test_round7_after.py) the four wrong warnings are gone: a reload of weights saved
    # only when a score beats the best so far is no resume (TW131), batch norms with momentum=1
    # need no eval() (TW103), an optimizer handed to another file's code trains (TW132), an
    # iterator over a loader whose sampler never ends never runs out (TW130). The same 16 found.
    result = bench.load("lint_recall").measure(HELD_OUT_7)
    assert [u for u in result["unjudged"] if u["level"] != "info"] == [], "judge them in the folder's findings.json"
    # Round 8 (lint8b), worked on since: TW150 finds world-models' cur_best = None after both reloads,
    # TW132 real-nvp's sample() called after eval() outside no_grad (TW151 lands on its resume's lines),
    # TW149 (info) vq-vae-2's sampler from dist.data_sampler(..., distributed=...) with no set_epoch.
    # Round 9 (lint9b): TW131 reads vq-vae-2 pixelsnail's --ckpt as a resume, since the keys it reads
    # back ('model', 'args') are those of the dict the script saves each epoch (line 136), and ENAS's
    # load_model() as one, since it sets the start_epoch train() counts from (line 613); TW159 finds
    # convNet's resume from model_best.pth.tar (line 216), and lands on real-nvp's resume from
    # ckpts/best.pth.tar (line 54, on its judged map_location bug's line: right). With "reload" a
    # resume word, TW159 also lands on world-models trainvae's reload of best.tar (line 133, on its
    # judged reload bug's line: right; checkpoint.tar holds the last state).
    assert (result["bugs"], len(result["found"])) == (33, 23)
    assert (result["warnings+errors"], len(result["right"])) == (27, 27)
    assert result["wrong"] == []
