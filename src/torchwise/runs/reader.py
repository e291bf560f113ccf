"""Reading a finished (or running, or dead) run folder back, for `runs`, `diagnose` and `report`.

A reader trusts nothing in the folder to be code: it reads JSON and plain YAML through
`runs.safe_io` (no link followed, regular files only, size and depth limits) and imports no user
module, so looking at a run from somewhere else is safe. A document that is not what torchwise
writes (malformed, or a field of the wrong type) is a `FolderFileError` naming the file.

>>> import tempfile, json
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "summary.json").write_text(json.dumps({"status": "running", "name": "x"}))
>>> read_run(folder).status   # nobody holds its lock: the process died
'killed'
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchwise.checkpoints.integrity import damage
from torchwise.errors import TorchwiseError
from torchwise.runs.lock import lock_held
from torchwise.runs.safe_io import FolderFileError, read_json_or_none, read_jsonl, read_yaml

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
    damage: list[str] = field(default_factory=list)  # "<checkpoint>: <what>" (checkpoints.integrity)

    @property
    def name(self) -> str:
        return str(self.summary.get("name") or self.path.name)

    @property
    def status(self) -> str:
        """The summary's status, except that a `running` run nobody holds the lock of is `killed`:
        its process died (SIGKILL, the OOM killer, a power cut) before it could say so (a folder
        without a summary is one whose process died, or is still starting, before writing it); and
        `damaged` whatever it says when a checkpoint's tensor files do not match its meta.json."""
        if self.damage:
            return "damaged"
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
            if record.get("split") == split and isinstance(value, (int, float)) and type(record.get("step")) is int:
                points[int(record["step"])] = float(value)
        steps = sorted(points)
        return steps, [points[s] for s in steps]

    def json_file(self, name: str) -> dict[str, Any]:
        """Another JSON file of the run (``model.json``, ``data_stats.json``); {} when absent.

        A malformed one is a `FolderFileError`."""
        data = _read_json(self.path / name)
        return data if isinstance(data, dict) else {}

    def anomalies(self) -> list[str]:
        """Events worth a look and the diagnosis's warnings and errors, e.g. ``oom_retry x2``."""
        counts: dict[str, int] = {}
        for event in self.events:
            kind = event.get("event")
            if kind in ANOMALY_EVENTS:
                counts[kind] = counts.get(kind, 0) + 1
        found = [f"damaged {item}" for item in self.damage]
        found += [f"{kind} x{n}" if n > 1 else kind for kind, n in counts.items()]
        for finding in (self.diagnosis or {}).get("findings", []):
            if finding.get("severity") in ("warn", "error") and finding.get("code") not in found:
                found.append(finding["code"])
        return found


def _read_json(path: Path) -> Any:
    return read_json_or_none(path)


# The summary fields readers use, and the types torchwise writes them with.
_NUMBER = (int, float)
SUMMARY_TYPES: dict[str, tuple[type, ...]] = {
    "status": (str,), "name": (str,), "reason": (str,), "best": (dict,), "final": (dict,), "epochs": (int,),
    "steps": (int,), "wall_seconds": _NUMBER, "started": (str, *_NUMBER), "finished": (str, *_NUMBER),
    "segments": (list,)}
BEST_TYPES: dict[str, tuple[type, ...]] = {"metric": (str,), "value": _NUMBER, "epoch": (int,), "step": (int,)}


def check_summary(path: Path, summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` back when its fields have the types torchwise writes; else `FolderFileError`."""
    def check(where: str, document: dict[str, Any], types: dict[str, tuple[type, ...]]) -> None:
        for key, allowed in types.items():
            value = document.get(key)
            if value is not None and (not isinstance(value, allowed) or isinstance(value, bool)):
                raise FolderFileError(f"{path}: {where}{key} has the wrong type ({type(value).__name__})",
                                      hint="restore the file from the run's owner, or remove it")
    check("", summary, SUMMARY_TYPES)
    check("best.", summary.get("best") or {}, BEST_TYPES)
    if not all(isinstance(v, (*_NUMBER, type(None))) for v in (summary.get("final") or {}).values()):
        raise FolderFileError(f"{path}: final holds a value that is not a number",
                              hint="restore the file from the run's owner, or remove it")
    return summary


def check_sections(path: Path, config: Any) -> dict[str, Any]:
    """A reader's config is data it does not validate (older runs may hold other keys), but its
    sections must be mappings where the schema has them, as every reader assumes."""
    from torchwise.config import RunConfig

    if not isinstance(config, dict):
        raise FolderFileError(f"{path} does not hold a run config", hint="restore the run's config.yaml")
    sections = [name for name, value in RunConfig().to_yaml_dict().items() if isinstance(value, dict)]
    for name in sections:
        if config.get(name) is not None and not isinstance(config[name], dict):
            raise FolderFileError(f"{path}: {name} is not a mapping of settings",
                                  hint="restore the file from the run's owner, or remove it")
    return config


def check_diagnosis(path: Path, diagnosis: dict[str, Any] | None) -> dict[str, Any] | None:
    findings = (diagnosis or {}).get("findings", [])
    if not isinstance(findings, list) or not all(
            isinstance(f, dict) and all(isinstance(f.get(k), (str, type(None))) for k in ("code", "severity"))
            for f in findings):
        raise FolderFileError(f"{path}: findings is not the list torchwise writes",
                              hint="restore the file from the run's owner, or remove it (diagnose writes it again)")
    return diagnosis


def read_run(path: Path) -> RunRecord:
    """Read a run folder; raise `RunNotFound` when it holds neither summary.json nor config.yaml."""
    path = Path(path)
    summary, config_file = path / "summary.json", path / "config.yaml"
    if not path.is_dir() or not any(os.path.lexists(f) for f in (summary, config_file)):
        raise RunNotFound(f"{path} is not a run folder (no summary.json or config.yaml in it)",
                          hint="pass a folder that `torchwise train` wrote, e.g. runs/digits")
    config = read_yaml(config_file) if os.path.lexists(config_file) else {}
    check_sections(config_file, config)
    return RunRecord(
        path=path, summary=check_summary(summary, _read_json(summary) or {}), config=config,
        metrics=standing_lines(_read_log(path / "metrics.jsonl")), events=_read_log(path / "events.jsonl"),
        env=_read_json(path / "env.json") or {},
        diagnosis=check_diagnosis(path / "diagnosis.json", _read_json(path / "diagnosis.json")),
        locked=lock_held(path), damage=damage(path),
    )


def _read_log(path: Path) -> list[dict[str, Any]]:
    try:
        return read_jsonl(path)
    except FileNotFoundError:
        return []


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
    # lexists: a planted link or FIFO as summary.json makes a folder a run to refuse, not to skip.
    if os.path.lexists(folder / "summary.json"):
        return [folder]
    return sorted(p for p in folder.iterdir()
                  if p.is_dir() and any(os.path.lexists(p / name) for name in ("summary.json", "config.yaml")))
