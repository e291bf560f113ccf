"""Realistic scripts: the clean ones stay quiet, the buggy ones report exactly what is marked."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchwise.lint.engine import lint_paths, lint_source
from torchwise.lint.findings import Level
from torchwise.lint.rules import all_rules

from .expectations import expected

CORPUS = Path(__file__).parent / "corpus"
CLEAN = sorted((CORPUS / "clean").glob("*.py"))
BUGGY = sorted((CORPUS / "buggy").glob("*.py"))


def test_corpus_is_big_enough():
    assert len(CLEAN) >= 15
    assert len(BUGGY) >= 5


@pytest.mark.parametrize("script", CLEAN, ids=lambda p: p.name)
def test_clean_script_has_no_warning_or_error(script):
    findings = lint_source(script.read_text(), str(script))
    assert [f for f in findings if f.level is not Level.INFO] == []
    assert not expected(script), "clean scripts carry no expect markers"


@pytest.mark.parametrize("script", BUGGY, ids=lambda p: p.name)
def test_buggy_script_reports_exactly_its_markers(script):
    findings = lint_source(script.read_text(), str(script))
    assert sorted((f.code, f.line) for f in findings) == sorted(expected(script))


def test_buggy_corpus_covers_every_rule():
    marked = {code for script in BUGGY for code, _ in expected(script)}
    assert marked == set(all_rules())


def test_whole_clean_folder_lints_clean():
    assert [f for f in lint_paths([CORPUS / "clean"]) if f.level is not Level.INFO] == []
