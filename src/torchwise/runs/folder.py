"""The run folder (DESIGN.md): config.yaml, env.json, metrics.jsonl, events.jsonl, summary.json.

Opening a `RunFolder` takes the folder's lock (`runs.lock`) for as long as it is open, so a
second process cannot write the same run. Every metrics and events line carries ``time``, the
wall-clock Unix time it was written.

>>> import tempfile, json
>>> run = RunFolder.create(Path(tempfile.mkdtemp()), "demo")
>>> run.log_metrics({"step": 1, "loss": 0.5}); run.close()
>>> record = json.loads((run.path / "metrics.jsonl").read_text())
>>> record["step"], record["loss"], record["time"] > 1.7e9
(1, 0.5, True)
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any, TextIO

from torchwise.runs.safe_io import open_append, read_json, read_jsonl, write_bytes_atomic

__all__ = ["STATUSES", "RunFolder", "read_jsonl", "write_json_atomic"]  # read_jsonl: safe_io's, kept here

STATUSES = ("running", "completed", "early_stopped", "pruned", "failed", "interrupted")


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON so that a reader never sees half a file (an unpredictable temp name, fsync, rename)."""
    write_bytes_atomic(path, (json.dumps(data, indent=2, default=_jsonable) + "\n").encode())


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _clean(value: Any) -> Any:
    # JSON has no NaN/inf; write null so every line stays valid JSON for other tools.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class RunFolder:
    """Append-only metric and event logs plus the run's documents, under one folder."""

    def __init__(self, path: Path) -> None:
        from torchwise.runs.lock import RunLock

        self.path = path
        # First, before anything is written: a refused second writer changes nothing.
        self._lock = RunLock.acquire(path)
        self._metrics: TextIO = open_append(path / "metrics.jsonl")  # never through a planted link
        self._events: TextIO = open_append(path / "events.jsonl")
        self._tensorboard: Any = None
        self._mlflow: Any = None

    def enable_tensorboard(self) -> None:
        """Mirror every metric line to TensorBoard scalars under ``tensorboard/``."""
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            from torchwise.errors import ConfigError

            raise ConfigError("log.tensorboard needs the tensorboard package",
                              hint="pip install 'torchwise[tensorboard]', or set log.tensorboard=false") from None
        from torchwise.runs.safe_io import check_folder

        self._tensorboard = SummaryWriter(str(check_folder(self.path / "tensorboard")))  # not a planted link

    def enable_mlflow(self, config: dict[str, Any], *, uri: str | None, experiment: str) -> None:
        """Mirror params, metric lines and, at close, the folder's files to MLflow (runs/mlflow_log.py)."""
        from torchwise.runs.mlflow_log import MlflowMirror

        self._mlflow = MlflowMirror(self.path, config, uri=uri, experiment=experiment)

    @classmethod
    def create(cls, parent: Path, name: str) -> RunFolder:
        """Make ``parent/name``, or ``name-2``, ``name-3``... so that runs never collide."""
        parent.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip(".-") or "run"
        for attempt in range(1, 10_000):
            path = parent / (safe if attempt == 1 else f"{safe}-{attempt}")
            try:
                path.mkdir()  # atomic: two runs starting together cannot take the same folder
            except FileExistsError:
                continue
            return cls(path)
        raise RuntimeError(f"no free run name under {parent}")

    @property
    def checkpoints(self) -> Path:
        return self.path / "checkpoints"

    def write_config(self, config: dict[str, Any]) -> None:
        import yaml

        write_bytes_atomic(self.path / "config.yaml", yaml.safe_dump(config, sort_keys=False).encode())

    def write_json(self, name: str, data: Any) -> None:
        write_json_atomic(self.path / name, data)

    def log_metrics(self, record: dict[str, Any]) -> None:
        record = {**record, "time": round(time.time(), 3)}
        self._metrics.write(json.dumps({k: _clean(v) for k, v in record.items()}, default=_jsonable) + "\n")
        self._metrics.flush()
        if self._tensorboard is not None:
            split, step = record.get("split", "train"), record.get("step", 0)
            for key, value in record.items():
                if key not in ("step", "epoch", "split", "time") and isinstance(value, (int, float)):
                    self._tensorboard.add_scalar(f"{split}/{key}", value, global_step=step)
        if self._mlflow is not None:
            self._mlflow.log_metrics(record)

    def log_event(self, kind: str, **fields: Any) -> None:
        record = {"time": round(time.time(), 3), "event": kind, **{k: _clean(v) for k, v in fields.items()}}
        self._events.write(json.dumps(record, default=_jsonable) + "\n")
        self._events.flush()

    def write_summary(self, summary: dict[str, Any]) -> None:
        assert summary.get("status") in STATUSES, summary.get("status")
        write_json_atomic(self.path / "summary.json", {k: _clean(v) for k, v in summary.items()})

    def close(self) -> None:
        if self._tensorboard is not None:
            self._tensorboard.close()
        if self._mlflow is not None:
            try:  # after summary.json and diagnosis.json, so that they are among the artefacts
                self._mlflow.close(read_json(self.path / "summary.json"))
            except Exception as err:  # a tracking server that went away must not fail a finished run
                self.log_event("mlflow_failed", reason=f"{type(err).__name__}: {err}")
        self._metrics.close()
        self._events.close()
        self._lock.release()

