"""What a doctor check returns, and the report that gathers them.

>>> f = Finding(id="shm-size", level="warn", summary="/dev/shm is 64 MiB",
...             fix="docker run --shm-size=8g ...")
>>> f.to_json()["level"]
'warn'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Level = Literal["ok", "info", "warn", "fail"]
LEVELS: tuple[Level, ...] = ("ok", "info", "warn", "fail")


@dataclass(frozen=True)
class Finding:
    """One verdict: ``id`` is stable for scripts, ``fix`` is the exact thing to do (or None)."""

    id: str
    level: Level
    summary: str
    detail: str = ""
    fix: str | None = None

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {self.level!r}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DoctorReport:
    """All findings of one ``doctor()`` run plus the facts to paste into a bug report."""

    findings: list[Finding]
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(f.level == "fail" for f in self.findings)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def by_id(self, finding_id: str) -> Finding:
        for finding in self.findings:
            if finding.id == finding_id:
                return finding
        raise KeyError(finding_id)

    def to_json(self) -> dict[str, Any]:
        return {"findings": [f.to_json() for f in self.findings], "report": self.report}

    def render_plain(self) -> str:
        """The block to paste into a bug report: facts first, then every non-ok finding."""
        width = max(len(key) for key in self.report) if self.report else 0
        lines = [f"{key.ljust(width)} : {value}" for key, value in self.report.items()]
        problems = [f for f in self.findings if f.level in ("warn", "fail")]
        if problems:
            lines.append("")
            lines += [f"{f.level.upper():4} {f.id}: {f.summary}" for f in problems]
        return "\n".join(lines)
