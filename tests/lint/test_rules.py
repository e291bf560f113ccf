"""One fixture per rule: positive cases marked ``# expect: TWxxx`` and near-miss negatives."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchwise.lint.config import LintConfig
from torchwise.lint.engine import lint_source
from torchwise.lint.rules import all_rules

from .expectations import expected

FIXTURES = Path(__file__).parent / "fixtures"
CODES = sorted(all_rules())


@pytest.mark.parametrize("code", CODES)
def test_rule_reports_exactly_the_marked_lines(code):
    fixture = FIXTURES / f"{code.lower()}.py"
    want = expected(fixture)
    assert want, f"{fixture.name} has no positive case"
    assert {c for c, _ in want} == {code}
    findings = lint_source(fixture.read_text(), str(fixture), config=LintConfig(select=(code,)))
    assert {(f.code, f.line) for f in findings} == want


@pytest.mark.parametrize("code", CODES)
def test_every_rule_documents_why_and_fix(code):
    rule = all_rules()[code]
    doc = rule.check.__doc__ or ""
    assert "Why:" in doc and "Fix:" in doc and "Cannot see:" in doc, code
    assert rule.hint and rule.blind_spots


def test_seed_rule_leaves_library_modules_to_their_scripts():
    library = (
        "def train_one_epoch(model, loader, optimizer):\n"
        "    model.head = torch.nn.Linear(4, 2)\n"
        "    for x, y in loader:\n"
        "        optimizer.zero_grad()\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
    )
    only_seed = LintConfig(select=("TW115",))
    assert lint_source(library, config=only_seed) == []
    script = library + "\nif __name__ == '__main__':\n    train_one_epoch(m, l, o)\n"
    assert [(f.code, f.line) for f in lint_source(script, config=only_seed)] == [("TW115", 1)]


def test_seed_rule_follows_module_level_calls_into_functions():
    script = (
        "def train(model, loader, optimizer):\n"
        "    torch.nn.init.normal_(model.weight)\n"
        "    for x, y in loader:\n"
        "        optimizer.zero_grad()\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
        "\n"
        "train(model, loader, optimizer)\n"
    )
    only_seed = LintConfig(select=("TW115",))
    assert [(f.code, f.line) for f in lint_source(script, config=only_seed)] == [("TW115", 1)]


def test_docs_page_lists_every_rule_with_its_level_and_blind_spots():
    page = (Path(__file__).resolve().parents[2] / "docs" / "lint.md").read_text(encoding="utf-8")
    table = page[page.index("| code | level | catches | cannot see |") :].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| TW")]
    want = [
        f"| {code} | {rule.level.value} | {rule.summary} | {rule.blind_spots} |".replace("``", "`")
        for code, rule in all_rules().items()
    ]
    assert rows == want
