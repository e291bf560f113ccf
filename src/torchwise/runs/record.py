"""When a run trained: ISO 8601 times and the segments of a resumed run.

A run trains in one or more *segments*, one per process (`train`, then each `resume`).
`summary.json` keeps them all::

    "started": "2026-11-30T23:58:01.112+00:00",      # the first segment's start
    "finished": "2026-11-30T23:59:40.020+00:00",     # the last segment's end
    "wall_seconds": 97.4,                            # the sum over the segments
    "segments": [{"started": ..., "finished": ..., "wall_seconds": 60.2, "status": "interrupted"},
                 {"started": ..., "finished": ..., "wall_seconds": 37.2, "status": "completed"}]

A segment whose process was killed never wrote its end; it is taken to end at the last line
it wrote to `metrics.jsonl` or `events.jsonl` (every line carries its wall time), so its
training time still counts.

>>> from datetime import datetime
>>> datetime.fromisoformat(iso_time(0.0)).timestamp()
0.0
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any


def iso_time(unix_seconds: float) -> str:
    """ISO 8601 in the machine's zone, with the offset (``2026-11-30T23:58:01.112+00:00``)."""
    return datetime.fromtimestamp(unix_seconds).astimezone().isoformat(timespec="milliseconds")


def unix_time(value: Any) -> float | None:
    """A summary time back to Unix seconds: ISO text, or the bare number older runs wrote."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None


def last_line_time(run_dir: Path) -> float | None:
    """The wall time of the last complete line in metrics.jsonl / events.jsonl (None if none)."""
    from torchwise.runs.safe_io import iter_jsonl

    latest = None
    for name in ("metrics.jsonl", "events.jsonl"):
        try:
            stamps = [record.get("time") for record in iter_jsonl(run_dir / name)]  # torn lines skipped
        except FileNotFoundError:
            continue
        stamp = next((s for s in reversed(stamps) if isinstance(s, (int, float)) and not isinstance(s, bool)), None)
        if stamp is not None:
            latest = stamp if latest is None else max(latest, stamp)
    return latest


def earlier_segments(run_dir: Path) -> list[dict[str, Any]]:
    """The segments before this process, from the run's summary; a killed one is closed here."""
    from torchwise.runs.safe_io import read_json_or_none

    summary = read_json_or_none(run_dir / "summary.json") or {}
    segments = summary.get("segments")
    if not isinstance(segments, list):  # a summary written before segments existed
        start = unix_time(summary.get("started"))
        if start is None:
            return []
        segments = [{"started": iso_time(start), "finished": None, "status": summary.get("status"),
                     "wall_seconds": summary.get("wall_seconds")}]
    segments = [dict(s) for s in segments if isinstance(s, dict)]
    for segment in segments:
        if segment.get("wall_seconds") is None:  # its process died without writing its end
            start, end = unix_time(segment.get("started")), last_line_time(run_dir)
            segment["wall_seconds"] = round(max(end - start, 0.0), 3) if start and end else 0.0
            segment["finished"] = iso_time(end) if end else None
            segment["status"] = "killed"
    return segments


def segment(*, started: float, finished: float | None, status: str) -> dict[str, Any]:
    return {"started": iso_time(started), "finished": iso_time(finished) if finished else None,
            "status": status, "wall_seconds": round(finished - started, 3) if finished else None}


def timing(segments: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary's time fields from its segments (the last may still be open)."""
    return {"started": segments[0]["started"], "finished": segments[-1]["finished"],
            "wall_seconds": round(sum(s["wall_seconds"] or 0.0 for s in segments), 3),
            "segments": segments}
