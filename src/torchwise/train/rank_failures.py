"""Under torchrun, the first rank that fails says why, so that the others (and the summary) can.

A rank whose own code failed (not a collective) leaves a note in the run folder before it leaves
the process group: the others learn of the failure only when their next collective breaks, and
by then torchrun may already be stopping the first rank before it prints. The rank whose
collective broke reads the note and names the first cause in its error (rank 0 also in the
summary). Notes are hidden files, newer than the segment that reads them, removed by rank 0.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

PREFIX = ".failed-rank-"


def leave_note(run_path: Path, *, rank: int, world: int, reason: str) -> None:
    """This rank failed first (its own error): say so where the others look."""
    note = run_path / f"{PREFIX}{rank}.json"
    tmp = run_path / f".{note.name}.tmp-{os.getpid()}"
    try:
        tmp.write_text(json.dumps({"rank": rank, "world": world, "reason": reason[:2000], "time": time.time()}))
        os.replace(tmp, note)
    except OSError:  # a folder we cannot write: the others fall back to naming the collective
        pass


def first_cause(run_path: Path | None, *, rank: int, since: float) -> str | None:
    """``rank R/W failed: reason`` for the earliest note of another rank written since ``since``."""
    if run_path is None:
        return None
    notes: list[dict[str, Any]] = []
    for path in run_path.glob(f"{PREFIX}*.json"):
        try:
            note = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(note, dict) and note.get("rank") != rank and float(note.get("time") or 0) >= since:
            notes.append(note)
    if not notes:
        return None
    first = min(notes, key=lambda n: float(n["time"]))
    return f"rank {first['rank']}/{first['world']} failed first: {first['reason']}"


def clear_notes(run_path: Path) -> None:
    for path in run_path.glob(f"{PREFIX}*.json"):
        path.unlink(missing_ok=True)
