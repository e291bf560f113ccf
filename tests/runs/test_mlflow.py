"""`log.mlflow: true`: a run logged to a temporary file store reads back with MLflow's own client."""

from __future__ import annotations

import json

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification

import torchwise

mlflow = pytest.importorskip("mlflow")


def test_params_metrics_and_artefacts_read_back_with_mlflows_client(tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)  # torchwise sets it for its file store
    result = torchwise.fit(torch.nn.Linear(6, 3), tiny_classification(), tiny_classification(40, seed=1),
                           runs_dir=tmp_path / "runs", name="tracked",
                           config=quiet_config(train={"epochs": 3, "batch_size": 20}, optim={"lr": 0.02},
                                               log={"mlflow": True}))
    uri = (tmp_path / "runs" / "mlruns").as_uri()
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("torchwise")
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.run_name == "tracked" and run.info.status == "FINISHED"
    assert run.data.params["optim.lr"] == "0.02" and run.data.params["train.epochs"] == "3"
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert run.data.metrics["final/val_loss"] == summary["final"]["val_loss"]
    assert run.data.metrics["final/val_accuracy"] == summary["final"]["val_accuracy"]
    history = client.get_metric_history(run.info.run_id, "train/loss")
    lines = [r for r in map(json.loads, (result.run_dir / "metrics.jsonl").read_text().splitlines())
             if r["split"] == "train"]
    assert [(m.step, m.value) for m in history] == [(r["step"], r["loss"]) for r in lines]
    artefacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"config.yaml", "metrics.jsonl", "summary.json", "diagnosis.json"} <= artefacts


def test_a_missing_package_is_a_config_error_with_a_hint(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_mlflow(name, *args, **kwargs):
        if name.startswith("mlflow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    with pytest.raises(torchwise.TorchwiseError) as caught:
        torchwise.fit(torch.nn.Linear(6, 3), tiny_classification(), runs_dir=tmp_path, name="x",
                      config=quiet_config(train={"epochs": 1}, log={"mlflow": True}))
    assert caught.value.hint == "pip install 'torchwise[mlflow]', or set log.mlflow=false"
