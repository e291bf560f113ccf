"""The ledger: one row per run of a folder, and the comparison of a few runs.

Reads run folders only (`reader.py`); never imports the runs' code.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path
from typing import Any

from torchwise.runs.config_keys import differing_keys, flatten
from torchwise.runs.reader import RunRecord, find_runs, read_run


def ledger_rows(folder: Path) -> list[dict[str, Any]]:
    """One dict per run under ``folder``, oldest first, with the keys where it differs from the
    runs of its family (the same data and model: `family`); runs of other families are not
    compared with it, their data and model already say how they differ."""
    records = [read_run(path) for path in find_runs(folder)]
    records.sort(key=lambda r: str(r.summary.get("started") or ""))
    families: dict[str, list[RunRecord]] = {}
    for record in records:
        families.setdefault(family(record.config), []).append(record)
    keys = {name: differing_keys([r.config for r in members]) for name, members in families.items()}
    return [row(record, keys[family(record.config)]) for record in records]


def family(config: dict[str, Any]) -> str:
    """``data/model`` of a run's config: ``digits/mlp``, ``python/mlp``, ``my_data:load/models:Net``."""
    flat = flatten(config)
    data = flat.get("data.target") or flat.get("data.source") or "?"
    model = flat.get("model.target") or flat.get("model.name") or "?"
    return f"{data}/{model}"


def row(record: RunRecord, keys: list[str]) -> dict[str, Any]:
    summary, flat = record.summary, flatten(record.config)
    best = summary.get("best") or None
    return {
        "name": record.name, "path": str(record.path), "family": family(record.config),
        "started": summary.get("started"),
        "status": record.status, "best": best, "epochs": summary.get("epochs"), "steps": summary.get("steps"),
        "wall_seconds": summary.get("wall_seconds"), "differs": {k: flat.get(k) for k in keys},
        "anomalies": record.anomalies(), "reason": summary.get("reason"),
    }


def compare(paths: list[Path]) -> dict[str, Any]:
    """Config diff, best and final metrics side by side, for two or more runs."""
    records = [read_run(p) for p in paths]
    keys = differing_keys([r.config for r in records])
    flats = [flatten(r.config) for r in records]
    finals = [r.summary.get("final") or {} for r in records]
    metric_names: list[str] = []
    for final in finals:
        metric_names.extend(k for k in final if k not in metric_names)
    bests = [r.summary.get("best") or {} for r in records]
    return {
        "runs": [{"name": r.name, "path": str(r.path), "status": r.status} for r in records],
        "config": {k: [f.get(k) for f in flats] for k in keys},
        "best": [{"metric": b.get("metric"), "value": b.get("value"), "epoch": b.get("epoch")} for b in bests],
        "final": {m: [f.get(m) for f in finals] for m in metric_names},
    }


def short_time(iso: Any) -> str:
    """``2026-11-30T23:45:55.280+00:00`` -> ``11-30 23:45`` (older runs wrote Unix seconds)."""
    try:
        when = datetime.fromtimestamp(iso) if isinstance(iso, (int, float)) else datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return "-"
    return when.strftime("%m-%d %H:%M")


def duration(seconds: Any) -> str:
    if not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        return "-"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def number(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else "-" if value is None else str(value)


def best_text(best: dict[str, Any] | None) -> str:
    if not best or best.get("value") is None:
        return "-"
    epoch = best.get("epoch")
    return f"{best['metric']} {number(best['value'])}" + (f" (ep {epoch + 1})" if isinstance(epoch, int) else "")
