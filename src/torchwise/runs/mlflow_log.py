"""`log.mlflow: true`: mirror a run to MLflow (params, metrics, the run folder as artefacts).

The run folder stays the record; MLflow gets a copy for teams that browse runs there. By default
the tracking store is a local folder beside the runs (``runs/mlruns``, a ``file:`` URI), so
nothing leaves the machine; ``log.mlflow_uri`` points at a server or a database instead. MLflow 3
accepts a file store only with ``MLFLOW_ALLOW_FILE_STORE=true``, which this sets for a ``file:``
URI (set it too for ``mlflow ui --backend-store-uri runs/mlruns``). Each process that
trains the run (the first `train`, then each `resume`) is one MLflow run, named as the folder.

What is logged: every config key as a param (dotted names, ``optim.lr``), every numeric field
of each metrics line as ``<split>/<field>`` at its step (``train/loss``, ``val/accuracy``), the
summary's final metrics as ``final/<name>``, and at the end the run folder's files as artefacts.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from torchwise.errors import ConfigError
from torchwise.runs.config_keys import flatten

MLFLOW_STATUS = {"completed": "FINISHED", "early_stopped": "FINISHED", "pruned": "KILLED", "interrupted": "KILLED",
                 "failed": "FAILED"}


class MlflowMirror:
    """One MLflow run fed from the run folder's writes."""

    def __init__(self, run_dir: Path, config: dict[str, Any], *, uri: str | None, experiment: str) -> None:
        try:
            from mlflow.entities import Param
            from mlflow.tracking import MlflowClient
        except ImportError:
            raise ConfigError("log.mlflow needs the mlflow package",
                              hint="pip install 'torchwise[mlflow]', or set log.mlflow=false") from None
        self.run_dir = run_dir
        self.uri = uri or (run_dir.parent / "mlruns").resolve().as_uri()
        if self.uri.startswith("file:"):
            # MLflow 3 refuses its file store unless this is set (it keeps it "in maintenance");
            # the file store is what needs no server and no database, so opt in for our default.
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        self.client = MlflowClient(tracking_uri=self.uri)
        found = self.client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found else self.client.create_experiment(experiment)
        self.run_id = self.client.create_run(experiment_id, run_name=run_dir.name).info.run_id
        # MLflow caps a param value at 6000 characters and a batch at 100 params.
        params = [Param(key, str(value)[:6000]) for key, value in flatten(config).items()]
        for start in range(0, len(params), 100):
            self.client.log_batch(self.run_id, params=params[start:start + 100])

    def log_metrics(self, record: dict[str, Any]) -> None:
        from mlflow.entities import Metric

        split, step = record.get("split", "train"), int(record.get("step", 0))
        stamp = int(time.time() * 1000)
        metrics = [Metric(f"{split}/{key}", float(value), stamp, step) for key, value in record.items()
                   if key not in ("step", "epoch", "split", "time") and isinstance(value, (int, float))
                   and not isinstance(value, bool)]
        if metrics:
            self.client.log_batch(self.run_id, metrics=metrics)

    def close(self, summary: dict[str, Any]) -> None:
        """Final metrics, the run folder as artefacts, and the run's end status."""
        from mlflow.entities import Metric

        stamp = int(time.time() * 1000)
        step = int(summary.get("steps") or 0)
        final = [Metric(f"final/{key}", float(value), stamp, step)
                 for key, value in (summary.get("final") or {}).items() if isinstance(value, (int, float))]
        if final:
            self.client.log_batch(self.run_id, metrics=final)
        for path in sorted(self.run_dir.iterdir()):
            # Not the lock, not temporary files, and never a planted link (its target is not the run's).
            if path.is_file() and not path.is_symlink() and not path.name.startswith("."):
                self.client.log_artifact(self.run_id, str(path))
        status = MLFLOW_STATUS.get(str(summary.get("status")), "FAILED")
        self.client.set_terminated(self.run_id, status=status)
