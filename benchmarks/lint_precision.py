"""How often `torchwise lint` is right on real public training scripts, rule by rule.

Lints every script in ``tests/lint/real/`` (public code from pytorch/examples, PyTorch-GAN,
yunjey's tutorial, nanoGPT, minGPT, timm, DeiT, Accelerate's examples, ...; each file names
its source and commit) and matches each finding against ``tests/lint/real/verdicts.json``,
where every finding was judged by hand after reading the code around it. Precision is
judged-true findings over all findings, per rule and for warnings + errors together. The
verdicts also keep the false alarms that earlier versions raised and that are now gone
("fixed"); they do not count here, but the tests fail if one comes back.

    python benchmarks/lint_precision.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from torchwise.lint.engine import lint_paths
from torchwise.lint.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "lint" / "real"
Key = tuple[str, int, str]


def load_verdicts(folder: Path = REAL) -> dict[Key, dict[str, Any]]:
    """(file name, line, code) -> the hand verdict."""
    rows = json.loads((folder / "verdicts.json").read_text(encoding="utf-8"))
    return {(v["file"], v["line"], v["code"]): v for v in rows}


def current_findings(folder: Path = REAL) -> dict[Key, str]:
    """(file name, line, code) -> level, for what lint reports on the corpus today."""
    return {(Path(f.path).name, f.line, f.code): f.level.value for f in lint_paths([folder])}


def precision_table(
    findings: dict[Key, str], verdicts: dict[Key, dict[str, Any]]
) -> dict[str, Any]:
    """Per rule: findings, judged true, precision; then warnings+errors and all findings.
    Findings without a verdict are listed under ``unjudged`` (and count as false)."""
    per_rule: dict[str, dict[str, int]] = defaultdict(lambda: {"findings": 0, "true": 0})
    groups = {"warnings+errors": {"findings": 0, "true": 0}, "all": {"findings": 0, "true": 0}}
    unjudged = []
    for key, level in sorted(findings.items()):
        verdict = verdicts.get(key)
        right = bool(verdict and verdict["verdict"])
        if verdict is None:
            unjudged.append(key)
        for row in (per_rule[key[2]], groups["all"]) + (
            (groups["warnings+errors"],) if level != "info" else ()
        ):
            row["findings"] += 1
            row["true"] += right
    rules = all_rules()
    table = {
        code: {**row, "level": rules[code].level.value, "precision": row["true"] / row["findings"]}
        for code, row in sorted(per_rule.items())
    }
    totals = {
        name: {**row, "precision": row["true"] / row["findings"] if row["findings"] else 1.0}
        for name, row in groups.items()
    }
    fixed = sum(1 for v in verdicts.values() if v["status"] == "fixed")
    scripts = len(list(REAL.glob("*.py")))
    return {"rules": table, "totals": totals, "unjudged": unjudged, "fixed": fixed, "scripts": scripts}


def render(result: dict[str, Any]) -> str:
    lines = [
        f"{result['scripts']} public scripts; every finding judged by hand "
        f"({result['fixed']} earlier false alarms now gone)",
        "",
        "| rule | level | findings | judged true | precision |",
        "|---|---|---:|---:|---:|",
    ]
    for code, row in result["rules"].items():
        lines.append(
            f"| {code} | {row['level']} | {row['findings']} | {row['true']} | {row['precision']:.0%} |"
        )
    for name, row in result["totals"].items():
        lines.append(
            f"| **{name}** | | {row['findings']} | {row['true']} | **{row['precision']:.1%}** |"
        )
    if result["unjudged"]:
        lines.append(f"\nunjudged findings (judge them in verdicts.json): {result['unjudged']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the table as JSON here")
    args = parser.parse_args()
    result = precision_table(current_findings(), load_verdicts())
    print(render(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2, default=list) + "\n")


if __name__ == "__main__":
    main()
