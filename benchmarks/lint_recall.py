"""How many judged real bugs `torchwise lint` finds in public scripts, and how often it is right.

A folder (``tests/lint/worked21``, ``tests/lint/heldout21``) holds public training scripts and,
beside each, ``NAME.json``: the real bugs found by reading the script (``bugs``: lines, kind,
why) and, once lint has run on it, a hand verdict for every finding that is not on a bug's
line (``findings``: line, code, verdict, reason). Verdicts for findings may also sit in the folder's
``findings.json`` ({script: [row, ...]}), so a held-out folder's own files stay untouched.

A bug is *found* when a finding whose code names that kind of bug lands on one of its lines
(``NAMES`` below: a ``TW110`` on the line of a whole-module load is not a find of it); the
looser count, any finding on the line, is printed beside it. A warning or error is right when
its verdict is true, or it names the bug on whose line it lands.

    python benchmarks/lint_recall.py tests/lint/worked21 [--json PATH]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from torchwise.errors import LintError
from torchwise.lint.engine import lint_paths, parse

# The message of a file lint cannot parse: "path:line:col: cannot parse: ...".
_UNPARSED = re.compile(r"^(?P<path>.+?):(?P<line>\d+):\d+: cannot parse")


class Seen(NamedTuple):
    name: str
    line: int
    code: str
    level: str


def seen_in(folder: Path) -> list[Seen]:
    """Every finding in the folder; a file lint refuses to parse is one error at the line the
    parser names (code ``parse``): that refusal is what the user sees."""
    errors: list[Exception] = []
    seen = [Seen(Path(f.path).name, f.line, f.code, f.level.value) for f in lint_paths([folder], errors=errors)]
    for error in errors:
        match = _UNPARSED.match(str(error))
        if match:
            seen.append(Seen(Path(match["path"]).name, int(match["line"]), "parse", "error"))
    return seen


# The codes that name each kind of judged bug; "other" bugs are matched by any code on the line
# (each such hit is checked by hand in the verdicts).
NAMES = {
    "eval-grad": {"TW104", "TW132"},
    # Round 9's collector judged a missing no_grad and a missing eval() as one bug: either rule names it.
    "eval-without-no-grad-or-eval-mode": {"TW103", "TW104", "TW132"},
    # A resume that brings the weights back and loses the rest of the run: the optimizer, scaler or
    # schedule (TW131), the best score so far (TW150), the epoch it had finished (TW151), the LR
    # milestones it had passed (TW152).
    "resume-partial": {"TW131", "TW150", "TW151", "TW152"},
    "whole-module-save": {"TW111", "TW125"},
    "data0": {"TW129"},
    "next-exhausted": {"TW130"},
    "unguarded-cuda": {"TW108"},
    "scheduler-before-optimizer": {"TW112"},
}
# Round 7's collector named the same kinds in words of its own (tests/lint/worked7, heldout7).
ALIASES = {
    "eval-without-no-grad": "eval-grad",
    "resume-misses-optimizer": "resume-partial",
    "resume-misses-scheduler": "resume-partial",
    # Round 9's collector (tests/lint/worked9, heldout9).
    "data-index-0-dim": "data0",
}


# Kinds whose bug names an evaluation: TW103/TW104 report its loop, which lands on the bug.
_EVALUATIONS = frozenset({"eval-grad", "eval-without-no-grad-or-eval-mode"})


def load_verdicts(folder: Path) -> dict[str, dict[str, Any]]:
    """script name -> its verdict file's contents."""
    verdicts = {
        script.name: json.loads(script.with_suffix(".json").read_text(encoding="utf-8"))
        for script in sorted(folder.glob("*.py"))
    }
    for verdict in verdicts.values():
        for bug in verdict["bugs"]:
            bug["kind"] = ALIASES.get(bug["kind"], bug["kind"])
    return verdicts


def _compound_spans(script: Path) -> list[tuple[int, int]]:
    """(first, last) line of each loop and ``with`` block: a finding that names the loop a
    evaluation bug's line is in (TW104 reports the evaluation loop, not its forward call)
    lands on that bug."""
    try:  # read as lint reads it: a torch 0.3 `.cuda(async=True)` file parses too
        tree = parse(script.read_text(encoding="utf-8"), str(script)).tree
    except LintError:
        return []
    loops = ast.For | ast.While | ast.With | ast.AsyncFor | ast.AsyncWith
    return [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree) if isinstance(n, loops)]


def measure(folder: Path) -> dict[str, Any]:
    """Bugs found and missed, warnings/errors right and wrong, findings still to judge."""
    verdicts = load_verdicts(folder)
    findings = [f for f in seen_in(folder) if f.name in verdicts]
    side = folder / "findings.json"
    extra = json.loads(side.read_text(encoding="utf-8")) if side.is_file() else {}
    found, missed, loose, right, wrong, unjudged = [], [], [], [], [], []
    for name, verdict in verdicts.items():
        here = [f for f in findings if f.name == name]
        spans = _compound_spans(folder / name)
        for bug in (b for b in verdict["bugs"] if b["kind"] in _EVALUATIONS):
            loops = [start for start, end in spans if any(start <= line <= end for line in bug["lines"])]
            bug["lines"] = sorted({*bug["lines"], *loops})
        naming: set[tuple[int, str]] = set()
        for bug in verdict["bugs"]:
            codes = NAMES.get(bug["kind"])
            on_line = [f for f in here if f.line in bug["lines"]]
            hits = sorted(f"{f.code}:{f.line}" for f in on_line if codes is None or f.code in codes)
            naming |= {(f.line, f.code) for f in on_line if codes is None or f.code in codes}
            (found if hits else missed).append({"file": name, **bug, "hits": hits})
            if on_line:
                loose.append(name)
        rows = [*verdict.get("findings", []), *extra.get(name, [])]
        judged = {(row["line"], row["code"]): row for row in rows}
        for finding in here:
            row = {"file": name, "line": finding.line, "code": finding.code, "level": finding.level}
            if (finding.line, finding.code) in judged:
                verdict_true = judged[(finding.line, finding.code)]["verdict"]
            elif (finding.line, finding.code) in naming:
                verdict_true = True
            else:
                unjudged.append(row)
                continue
            if finding.level != "info":
                (right if verdict_true else wrong).append(row)
    bugs = len(found) + len(missed)
    warned = len(right) + len(wrong)
    return {
        "scripts": len(verdicts),
        "bugs": bugs,
        "found": found,
        "missed": missed,
        "recall": len(found) / bugs if bugs else 1.0,
        "found_loosely": len(loose),
        "warnings+errors": warned,
        "right": right,
        "wrong": wrong,
        "precision": len(right) / warned if warned else 1.0,
        "unjudged": unjudged,
    }


def render(result: dict[str, Any]) -> str:
    lines = [
        f"{result['scripts']} scripts, {result['bugs']} judged bugs: found {len(result['found'])} "
        f"({result['recall']:.0%}; any finding on a bug's line: {result['found_loosely']}); "
        f"warnings+errors {result['warnings+errors']}, right {len(result['right'])} ({result['precision']:.0%})",
    ]
    lines += [f"  missed  {b['file']}:{b['lines']} {b['kind']}" for b in result["missed"]]
    lines += [f"  wrong   {w['file']}:{w['line']} {w['code']}" for w in result["wrong"]]
    lines += [f"  judge   {u['file']}:{u['line']} {u['code']} ({u['level']})" for u in result["unjudged"]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", type=Path, help="also write the result as JSON here")
    args = parser.parse_args()
    result = measure(args.folder)
    print(render(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
