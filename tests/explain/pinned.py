"""What the tests that pin a working half share: the half's texts by number, and an answer's
whole text once its table entry is checked."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from torchwise.explain.lookup import explain


def working_texts(folder: str) -> dict[int, str]:
    rows = yaml.safe_load((Path(__file__).parent / folder / "texts.yaml").read_text())
    return {row["number"]: row["text"] for row in rows}


def answer_text(message: str, error_id: str) -> str:
    explanation = explain(message)
    assert explanation is not None and explanation.id == error_id, (message[-300:], explanation)
    return "\n".join([explanation.title, explanation.meaning, explanation.cause, explanation.fix])


def pinned_tests(texts: dict[int, str], pinned: dict[int, tuple[str, list[str]]], not_known: list[int]):
    """The three tests of a pinned working half: each pinned text gets its entry and phrases,
    each text left unknown stays unknown, and together they are the whole half."""

    @pytest.mark.parametrize("number", sorted(pinned))
    def answered_with_its_cause(number: int) -> None:
        error_id, phrases = pinned[number]
        text = answer_text(texts[number], error_id)
        assert all(phrase in text for phrase in phrases), (number, [p for p in phrases if p not in text])

    @pytest.mark.parametrize("number", not_known)
    def stays_unknown(number: int) -> None:
        assert explain(texts[number]) is None

    def pinned_whole() -> None:
        assert sorted([*pinned, *not_known]) == sorted(texts)

    return answered_with_its_cause, stays_unknown, pinned_whole


def share_tests(folder: str, pinned: dict[int, tuple[str, list[str]]], positions: slice):
    """The tests of one helper's share of a working half (round 5 split a half by position):
    the share is exactly the rows at ``positions`` and each is answered with its entry and phrases."""
    texts = working_texts(folder)

    def the_share_is_its_positions() -> None:
        rows = yaml.safe_load((Path(__file__).parent / folder / "texts.yaml").read_text())
        assert sorted(pinned) == sorted(row["number"] for row in rows[positions])

    @pytest.mark.parametrize("number", sorted(pinned))
    def answered_with_its_cause(number: int) -> None:
        error_id, phrases = pinned[number]
        text = answer_text(texts[number], error_id)
        assert all(phrase in text for phrase in phrases), (number, [p for p in phrases if p not in text])

    return the_share_is_its_positions, answered_with_its_cause
