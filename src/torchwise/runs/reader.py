"""Reading a finished (or running, or dead) run folder back, for `runs`, `diagnose` and `report`.

A reader trusts nothing in the folder to be code: it reads JSON, YAML with ``safe_load`` and
nothing else, and imports no user module, so looking at a run from somewhere else is safe.

>>> import tempfile, json
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "summary.json").write_text(json.dumps({"status": "running", "name": "x"}))
>>> read_run(folder).status   # nobody holds its lock: the process died
'killed'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchwise.errors import TorchwiseError
from torchwise.runs.folder import read_jsonl
from torchwise.runs.lock import lock_held

ANOMALY_EVENTS = ("nonfinite", "nonfinite_skip", "oom_retry", "code_changed", "epoch_restarted")


class RunNotFound(TorchwiseError):
    """A path given as a run folder holds no run."""


@dataclass
class RunRecord:
    """Everything a run folder says, read once."""

    path: Path
    summary: dict[str, Any]
    config: dict[str, Any]
    metrics: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    env: dict[str, Any] = field(default_factory=dict)
    diagnosis: dict[str, Any] | None = None
    locked: bool = False

    @property
    def name(self) -> str:
        return str(self.summary.get("name") or self.path.name)

    @property
    def status(self) -> str:
        """The summary's status, except that a `running` run nobody holds the lock of is `killed`:
        its process died (SIGKILL, the OOM killer, a power cut) before it could say so. A folder
        without a summary is one whose process died (or is still starting) before writing it."""
        status = str(self.summary.get("status") or "running")
        if status == "running" and not self.locked:
            return "killed"
        return status

    def series(self, split: str, key: str) -> tuple[list[int], list[float]]:
        """(steps, values) of ``key`` on the metric lines of ``split``; a step logged twice
        (a resume replays from the last checkpoint) keeps its last value."""
        points: dict[int, float] = {}
        for record in self.metrics:
            value = record.get(key)
            if record.get("split") == split and isinstance(value, (int, float)) and "step" in record:
                points[int(record["step"])] = float(value)
        steps = sorted(points)
        return steps, [points[s] for s in steps]

    def json_file(self, name: str) -> dict[str, Any]:
        """Another JSON file of the run (``model.json``, ``data_stats.json``); {} when absent or unreadable."""
        data = _read_json(self.path / name)
        return data if isinstance(data, dict) else {}

    def anomalies(self) -> list[str]:
        """Events worth a look and the diagnosis's warnings and errors, e.g. ``oom_retry x2``."""
        counts: dict[str, int] = {}
        for event in self.events:
            kind = event.get("event")
            if kind in ANOMALY_EVENTS:
                counts[kind] = counts.get(kind, 0) + 1
        found = [f"{kind} x{n}" if n > 1 else kind for kind, n in counts.items()]
        for finding in (self.diagnosis or {}).get("findings", []):
            if finding.get("severity") in ("warn", "error") and finding.get("code") not in found:
                found.append(finding["code"])
        return found


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def read_run(path: Path) -> RunRecord:
    """Read a run folder; raise `RunNotFound` when it holds neither summary.json nor config.yaml."""
    import yaml

    path = Path(path)
    summary, config_file = path / "summary.json", path / "config.yaml"
    if not path.is_dir() or not (summary.is_file() or config_file.is_file()):
        raise RunNotFound(f"{path} is not a run folder (no summary.json or config.yaml in it)",
                          hint="pass a folder that `torchwise train` wrote, e.g. runs/digits")
    try:
        config = yaml.safe_load(config_file.read_text()) if config_file.is_file() else {}
    except yaml.YAMLError:
        config = {}
    return RunRecord(
        path=path, summary=_read_json(summary) or {}, config=config if isinstance(config, dict) else {},
        metrics=standing_lines(read_jsonl(path / "metrics.jsonl")) if (path / "metrics.jsonl").is_file() else [],
        events=read_jsonl(path / "events.jsonl") if (path / "events.jsonl").is_file() else [],
        env=_read_json(path / "env.json") or {}, diagnosis=_read_json(path / "diagnosis.json"),
        locked=lock_held(path),
    )


def standing_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The metric lines that stand: a resume writes ``{"split": "resume", "step": S}`` where its
    segment starts, and the lines before it logged after step S (by a process killed after its
    last checkpoint) are superseded by what the resume logs again. The marker itself is left out.

    >>> standing_lines([{"split": "train", "step": 1}, {"split": "train", "step": 2},
    ...                 {"split": "resume", "step": 1}, {"split": "train", "step": 2, "loss": 0.5}])
    [{'split': 'train', 'step': 1}, {'split': 'train', 'step': 2, 'loss': 0.5}]
    """
    kept: list[dict[str, Any]] = []
    for line in lines:
        if line.get("split") == "resume" and isinstance(line.get("step"), int):
            kept = [old for old in kept if not (isinstance(old.get("step"), int) and old["step"] > line["step"])]
        else:
            kept.append(line)
    return kept


def find_runs(folder: Path) -> list[Path]:
    """The run folders directly under ``folder`` (or ``folder`` itself when it is one)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise RunNotFound(f"{folder} is not a folder", hint="pass the folder that holds the runs, e.g. runs")
    if (folder / "summary.json").is_file():
        return [folder]
    return sorted(p for p in folder.iterdir()
                  if p.is_dir() and ((p / "summary.json").is_file() or (p / "config.yaml").is_file()))
