"""What a lint rule reports: a `Finding` at a place in a file, with a level and the fix.

Rules yield a `Hit` (the node, the message); the engine turns it into a `Finding` by adding
the rule's code, level and file path, so a rule never repeats its own code.

>>> Finding(code="TW110", level=Level.INFO, path="t.py", line=3, col=5,
...         message="torch.load without map_location", fix="pass map_location").to_dict()["line"]
3
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Level(str, Enum):
    """How bad a finding is: errors and warnings fail the run (exit 1), info does not."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions (line 1-based, column 0-based) by ``text``."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str

    @classmethod
    def replace(cls, node: ast.AST, text: str) -> Edit:
        """An edit that replaces the source of ``node`` by ``text``."""
        end_line = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
        end_col = getattr(node, "end_col_offset", None)
        return cls((node.lineno, node.col_offset), (end_line, end_col), text)  # type: ignore[attr-defined]

    @classmethod
    def insert(cls, at: tuple[int, int], text: str) -> Edit:
        return cls(at, at, text)


@dataclass(frozen=True)
class Unseen:
    """Code lint cannot read that could supply what a finding says is missing: ``who`` (a caller
    outside the file, ``Compute(...)`` of another file) could ``does`` ("turn it off", "run the
    backward"). A hit that names one is evidence lint cannot complete: the engine reports it as
    info, saying so (`graded`)."""

    who: str
    does: str


@dataclass(frozen=True)
class Hit:
    """What a rule yields: where, what is wrong, and optionally a sharper hint, level or edits;
    ``unseen`` names code lint could not read that could make the finding wrong."""

    node: ast.AST
    message: str
    hint: str | None = None
    level: Level | None = None
    edits: tuple[Edit, ...] = ()
    unseen: tuple[Unseen, ...] = ()


def graded(hit: Hit, level: Level) -> tuple[Level, str]:
    """The level and message a hit is reported with, given its rule's level.

    A finding stays a warning or an error only when its evidence is complete within what lint
    reads; where code it cannot read could supply the missing piece, it is info and its
    message says what lint could not see.

    >>> hit = Hit(ast.Pass(), "evaluation loop builds autograd graphs",
    ...           unseen=(Unseen("a caller outside this file", "turns it off"),))
    >>> level, message = graded(hit, Level.WARNING)
    >>> level.value, message.partition(", ")[2]
    ('info', 'unless a caller outside this file turns it off (code lint cannot read)')
    """
    level = hit.level or level
    if not hit.unseen:
        return level, hit.message
    unless = ", or ".join(f"{u.who} {u.does}" for u in dict.fromkeys(hit.unseen))
    return Level.INFO, f"{hit.message}, unless {unless} (code lint cannot read)"


@dataclass(frozen=True)
class Finding:
    """One reported problem; ``fix`` is the one-line hint shown under it."""

    code: str
    level: Level
    path: str
    line: int
    col: int
    message: str
    fix: str
    edits: tuple[Edit, ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "level": self.level.value,
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "message": self.message,
            "fix": self.fix,
        }
