"""Issue 21, round 9 (explain9a): the working half's wrong answers at the freeze, each read from the
evidence now (tests/explain/test_evidence_gate.py pins each mechanism on a reduced text), and the
page's round-9 rows checked against explain9a's judgement of the half (working9/judged-9a.yaml)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from tests.explain.pinned import answer_text, working_texts

from torchwise.explain.lookup import explain

WORKING9 = working_texts("working9")


@pytest.mark.parametrize(
    ("number", "error_id", "phrase"),
    [
        (3, "state-dict-mismatch", "the same tensor, attn.rpb, in each layer"),
        (4, "state-dict-mismatch", "parts the checkpoint never had"),
        (13, "linear-shapes", "the layer or encoder before it outputs 7 features"),
        (32, "windows-dll", "ZLUDA (named in the paste)"),
        (34, "windows-dll", "another version ([WinError 127])"),
        (43, "batch-size-mismatch", "no reshape of the batch relates them"),
        (46, "batch-size-mismatch", "no reshape of the batch relates them"),
        (65, "state-dict-mismatch", "in another order"),
        (68, "unexpected-keyword", "option for loading a model"),
        (82, "stack-unequal", "Your own code stacks them"),
        (86, "stack-unequal", "Entry 0 is empty"),
        (53, "audio-no-backend", "pip install soundfile"),  # torchaudio's no_backend wording
        (100, "input-weight-type", "(the input is torch.FloatTensor, the weights torch.cuda.FloatTensor)"),  # cut
    ],
)
def test_the_working_half_s_wrong_answers_read_from_the_evidence(number, error_id, phrase):
    assert phrase in answer_text(WORKING9[number], error_id)


def test_the_page_s_round_9_rows_are_the_judged_verdicts():
    root = Path(__file__).resolve().parents[2]
    judged = yaml.safe_load((root / "tests/explain/working9/judged-9a.yaml").read_text())
    assert [row["number"] for row in judged] == sorted(WORKING9)
    page = (root / "docs/explain.md").read_text()
    for label, key in (
        ("before \\(main at the freeze, f91f66e\\)", "before"),
        ("after \\(branch explain9a\\)", "after"),
    ):
        row = re.search(rf"\| {label}, judged by explain9a \| (\d+) \((\d+)%\) \| (\d+) \| (\d+) \|", page)
        assert row is not None, label
        counts = [sum(v[key] == kind for v in judged) for kind in ("right", "wrong", "not known")]
        assert [int(row.group(i)) for i in (1, 3, 4)] == counts
        assert int(row.group(2)) == round(100 * counts[0] / len(judged))
    # each answer judged right after is the one explain gives (a text judged not known may be read by
    # another branch's families later; that branch judges it)
    for row in judged:
        if row["after"] == "right":
            got = explain(WORKING9[row["number"]])
            assert got is not None and got.id == row["got_after"], row["number"]
