"""What `diagnose` finds in a run: findings, the diagnosis, and its plain-text form.

A finding is ``{code, severity, summary, why, evidence, fix}``: ``evidence`` holds the numbers
and the steps/epochs they come from, ``fix`` names config keys and values. ``healthy`` means
no ``warn`` or ``error`` finding. The checks live in `curves.py` (loss curves, events) and
`gradients.py` (per-layer gradient statistics, data wait); their thresholds in `thresholds.py`.

Unlike the doctor's `env.findings.Finding` (a verdict on the machine), a run finding carries
the evidence from the run's own record, which `report` and `runs` show.

It reads JSON and YAML (``safe_load``) only and imports no user code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["info", "warn", "error"]
SEVERITY_ORDER = {"error": 0, "warn": 1, "info": 2}


@dataclass
class RunFinding:
    code: str
    severity: Severity
    summary: str
    why: str
    fix: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Diagnosis:
    run: str
    findings: list[RunFinding]

    @property
    def healthy(self) -> bool:
        return not any(f.severity in ("warn", "error") for f in self.findings)

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "healthy": self.healthy, "findings": [f.to_json() for f in self.findings]}

    def one_line(self) -> str:
        """What `train` prints when the run is healthy: one line, notes (info findings) named."""
        first = self.findings[0] if self.findings else None
        line = f"diagnosis: healthy. {first.summary}" if first else "diagnosis: healthy"
        notes = [f.code for f in self.findings[1:]]
        return line + (f" (notes: {', '.join(notes)}; see torchwise diagnose)" if notes else "")


def render_diagnosis(diagnosis: Diagnosis, *, verbose: bool = False) -> str:
    """Plain text: one line per finding, then why, the evidence and the fix for the others."""
    if diagnosis.healthy and not verbose:
        return diagnosis.one_line()
    lines = [f"diagnosis of {diagnosis.run}:"]
    for finding in diagnosis.findings:
        lines.append(f"  {finding.severity:5s} {finding.code}: {finding.summary}")
        if finding.severity != "info" or finding.code not in ("healthy", "too_short"):
            lines.append(f"        why: {finding.why}")
            lines.append(f"        fix: {finding.fix}")
    return "\n".join(lines)
