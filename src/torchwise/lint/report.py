"""Render findings as ruff-like text, JSON, or SARIF 2.1.0 (for code-scanning UIs).

>>> f = Finding(code="TW111", level=Level.WARNING, path="t.py", line=2, col=1,
...             message="torch.save of the whole module model", fix="save the state_dict")
>>> print(render_text([f]))
t.py:2:1: TW111 torch.save of the whole module model
    hint: save the state_dict
Found 1 problem (0 errors, 1 warning, 0 info).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from torchwise import __version__
from torchwise.lint.findings import Finding, Level
from torchwise.lint.rules import all_rules

FORMATS = ("text", "json", "sarif")
_SARIF_LEVEL = {Level.ERROR: "error", Level.WARNING: "warning", Level.INFO: "note"}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 or word == "info" else f"{count} {word}s"


def render_text(findings: Sequence[Finding]) -> str:
    """Ruff-like lines: ``path:line:col: CODE message``, the hint below, then a count."""
    if not findings:
        return "All checks passed."
    lines = []
    for f in findings:
        lines.append(f"{f.path}:{f.line}:{f.col}: {f.code} {f.message}")
        lines.append(f"    hint: {f.fix}")
    levels = Counter(f.level for f in findings)
    counts = ", ".join(
        _plural(levels[level], word)
        for level, word in (
            (Level.ERROR, "error"),
            (Level.WARNING, "warning"),
            (Level.INFO, "info"),
        )
    )
    lines.append(f"Found {_plural(len(findings), 'problem')} ({counts}).")
    return "\n".join(lines)


def render_json(findings: Sequence[Finding]) -> str:
    """``[{"code", "level", "path", "line", "col", "message", "fix"}, ...]``."""
    return json.dumps([f.to_dict() for f in findings], indent=2)


def render_sarif(findings: Sequence[Finding]) -> str:
    """SARIF 2.1.0 with one run, the rules that fired, and one result per finding."""
    rules = all_rules()
    used = sorted({f.code for f in findings})
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torchwise",
                        "version": __version__,
                        "rules": [
                            {
                                "id": code,
                                "name": rules[code].name,
                                "shortDescription": {"text": rules[code].summary},
                                "help": {"text": rules[code].hint},
                                "defaultConfiguration": {"level": _SARIF_LEVEL[rules[code].level]},
                            }
                            for code in used
                        ],
                    }
                },
                "results": [
                    {
                        "ruleId": f.code,
                        "level": _SARIF_LEVEL[f.level],
                        "message": {"text": f"{f.message} ({f.fix})"},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": f.path.replace("\\", "/")},
                                    "region": {"startLine": f.line, "startColumn": f.col},
                                }
                            }
                        ],
                    }
                    for f in findings
                ],
            }
        ],
    }
    return json.dumps(sarif, indent=2)


def render(findings: Sequence[Finding], output_format: str) -> str:
    """The findings in ``output_format`` (one of `FORMATS`)."""
    renderers = {"text": render_text, "json": render_json, "sarif": render_sarif}
    return renderers[output_format](findings)


def fails(findings: Sequence[Finding]) -> bool:
    """Whether the findings should fail the run: any error or warning (info never does)."""
    return any(f.level in (Level.ERROR, Level.WARNING) for f in findings)
