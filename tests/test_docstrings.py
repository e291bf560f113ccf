"""The short examples in the modules' docstrings run and stay true (lint has its own runner)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "torchwise",
    "torchwise.api",
    "torchwise.config",
    "torchwise.errors",
    "torchwise.targets",
    "torchwise.target_files",
    "torchwise.runs.trust",
    "torchwise.reproducibility",
    "torchwise.data.loaders",
    "torchwise.data.batch",
    "torchwise.train.metrics",
    "torchwise.train.tasks",
    "torchwise.runs.folder",
    "torchwise.runs.snapshot",
    "torchwise.train.optim",
    "torchwise.train.schedules",
    "torchwise.env",
    "torchwise.env.compat",
    "torchwise.env.findings",
    "torchwise.env.precision",
    "torchwise.env.probe",
    "torchwise.explain",
    "torchwise.explain.lookup",
    "torchwise.explain.explanation",
    "torchwise.checkpoints.checkpoint",
    "torchwise.checkpoints.checkpoint_folder",
    "torchwise.checkpoints.compare",
    "torchwise.checkpoints.load",
    "torchwise.checkpoints.state_codec",
    "torchwise.checkpoints.tensor_file",
    "torchwise.checkpoints.weights",
    "torchwise.export.signature",
    "torchwise.export.formats",
    "torchwise.export.verify",
    "torchwise.export.manifest",
    "torchwise.export.exporter",
    "torchwise.export.run_info",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no example"
    assert result.failed == 0
