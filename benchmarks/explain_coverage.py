"""How much of a corpus of real error texts `torchwise explain` recognises, and how much it
answers right.

The corpus (tests/explain/corpus/*.yaml) holds error texts that users pasted into public
GitHub issues, each with its source thread, the fix the thread settled on, and what a right
answer must contain: the table id (the cause) and phrases (the numbers from the message echoed
back, the fix named). A text counts as *recognised* when explain() returns the expected id, and
as *right* when the answer also contains every expected phrase.

    python benchmarks/explain_coverage.py [--json PATH] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "explain" / "corpus"


@dataclass(frozen=True)
class Case:
    """One real error text: where it was posted, what it says, what a right answer holds."""

    family: str
    source: str
    text: str
    thread_fix: str
    id: str
    expect: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    case: Case
    got: str | None  # the id explain() answered, None when unknown
    missing: tuple[str, ...]  # expected phrases absent from the answer

    @property
    def recognised(self) -> bool:
        return self.got == self.case.id

    @property
    def right(self) -> bool:
        return self.recognised and not self.missing


def load_corpus(folder: Path = CORPUS) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("*.yaml")):
        for row in yaml.safe_load(path.read_text()):
            cases.append(Case(family=path.stem, expect=tuple(row.pop("expect")), **row))
    return cases


def judge(case: Case) -> Verdict:
    from torchwise.explain.lookup import explain

    explanation = explain(case.text)
    if explanation is None:
        return Verdict(case, None, case.expect)
    answer = "\n".join([explanation.title, explanation.meaning, explanation.cause, explanation.fix])
    return Verdict(case, explanation.id, tuple(p for p in case.expect if p not in answer))


def table(verdicts: list[Verdict]) -> str:
    by_family: dict[str, list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        by_family[verdict.case.family].append(verdict)
    rows = [f"{'family':<14}{'texts':>6}{'recognised':>12}{'right':>8}"]
    for family, group in sorted(by_family.items()) + [("all", verdicts)]:
        recognised = sum(v.recognised for v in group)
        right = sum(v.right for v in group)
        rows.append(f"{family:<14}{len(group):>6}{recognised:>12}{right:>8}")
    total = len(verdicts)
    rows.append(
        f"recognised {100 * sum(v.recognised for v in verdicts) / total:.1f}%,"
        f" right cause and fix {100 * sum(v.right for v in verdicts) / total:.1f}%"
        f" of {total} real error texts from {len({v.case.source for v in verdicts})} threads"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the verdicts here")
    parser.add_argument("--verbose", action="store_true", help="list every text not answered right")
    args = parser.parse_args(argv)
    verdicts = [judge(case) for case in load_corpus()]
    print(table(verdicts))
    if args.verbose:
        for verdict in verdicts:
            if not verdict.right:
                print(f"- {verdict.case.source}: got {verdict.got}, expected {verdict.case.id},"
                      f" missing {list(verdict.missing)}")
    if args.json:
        args.json.write_text(json.dumps(
            [{"source": v.case.source, "expected": v.case.id, "got": v.got,
              "missing": list(v.missing)} for v in verdicts], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
