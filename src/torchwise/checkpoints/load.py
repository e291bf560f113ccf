"""`load_model`: the trained model back from a run folder, in eval mode, ready to predict.

A run whose model came from its config (a built-in or ``model.target``) is rebuilt from the
run's ``config.yaml`` and ``model.json`` (the sizes the run inferred from its data); a run
whose model came from Python (``fit``) loads into the module you pass. Loading is strict:
missing, unexpected or mis-shaped keys raise `WeightsMismatch`, which lists each of them.
Tied weights (one tensor under two keys) come back tied: the checkpoint stores them once and
names the second key as an alias (see `checkpoint._dedupe`).

>>> import tempfile, torch
>>> from torch.utils.data import TensorDataset
>>> import torchwise
>>> x = torch.randn(64, 3); y = x.sum(1, keepdim=True)
>>> result = torchwise.fit(torch.nn.Linear(3, 1), TensorDataset(x, y), runs_dir=tempfile.mkdtemp(),
...     config={"task": {"type": "regression"}, "train": {"epochs": 2}}, quiet=True)
>>> model = load_model(result.run_dir, torch.nn.Linear(3, 1), which="last")
>>> model.training
False
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from torchwise.errors import CheckpointError, WeightsMismatch

if TYPE_CHECKING:
    import torch
    from torch import nn

    from torchwise.checkpoints.checkpoint import Checkpoint

MODEL_RECORD = "model.json"  # in the run folder: where the model came from, and its sizes


def load_model(run_dir: str | Path, model: nn.Module | None = None, *,
               which: Literal["best", "last"] = "best", device: str | torch.device = "cpu",
               trust_code: bool = False) -> nn.Module:
    """The weights of ``run_dir``'s ``checkpoints/<which>`` in ``model`` (or in the model the
    run's config builds), moved to ``device`` and switched to ``eval()``.

    Raises `CheckpointError` when the run has no such checkpoint, or when the run's model came
    from Python and no ``model`` is passed; `WeightsMismatch` when the weights do not fit;
    `UntrustedCodeError` when a run you did not write names a model target and ``trust_code``
    is not set (a built-in model, or a ``model`` you pass, needs no trust).
    """
    import torch

    from torchwise.checkpoints.checkpoint import load_checkpoint

    run_dir = Path(run_dir)
    folder = checkpoint_folder(run_dir, which)
    if model is None:
        model = build_run_model(run_dir, trust_code=trust_code)
    else:
        model = with_run_options(run_dir, model)
    model = model.to(torch.device(device))
    checkpoint = load_checkpoint(folder, map_location=device)
    load_weights(model, checkpoint)
    return model.eval()


def checkpoint_folder(run_dir: Path, which: str) -> Path:
    """``run_dir/checkpoints/<which>``, or a `CheckpointError` that says what the run has."""
    from torchwise.checkpoints.checkpoint_folder import find_checkpoint

    if which not in ("best", "last"):
        raise CheckpointError(f"which={which!r} is not a checkpoint of a run",
                              hint='use which="best" (the best monitored metric) or which="last"')
    if not (run_dir / "config.yaml").is_file():
        raise CheckpointError(f"{run_dir} is not a torchwise run folder (no config.yaml)",
                              hint="pass the folder a run wrote, e.g. runs/digits (see RunResult.run_dir)")
    folder = run_dir / "checkpoints" / which
    if find_checkpoint(folder) is None:
        present = [name for name in ("best", "last") if find_checkpoint(run_dir / "checkpoints" / name)]
        raise CheckpointError(
            f"the run {run_dir} has no {which!r} checkpoint"
            + (f" (it has {', '.join(present)})" if present else " (it saved none)"),
            hint=f'load which="{present[0]}"' if present else
            "train with checkpoint.enabled=true (the default) to keep the model")
    return folder


def build_run_model(run_dir: Path, *, trust_code: bool = False) -> nn.Module:
    """The model the run's config names, built as the run built it. The one place where
    loading a run imports code that the run's config names (``model.target``), so the trust
    gate stands here: only the model section is built, so only its target is checked."""
    from torchwise.models import build_model
    from torchwise.runs.trust import open_run_config

    cfg = open_run_config(run_dir, trust_code=trust_code, sections=("model",))
    record_path = run_dir / MODEL_RECORD
    record = json.loads(record_path.read_text()) if record_path.is_file() else {}
    if record.get("source") == "python" or (cfg.model.target is None and cfg.model.name is None):
        shown = f" ({record['class']})" if record.get("class") else ""
        raise CheckpointError(
            f"the model of {run_dir} came from Python code{shown}, not from its config",
            hint="build the model as you did for fit and pass it: "
                 "torchwise.load_model(run_dir, MyModel(...))")
    if cfg.model.target is None and "out_features" not in record:
        raise CheckpointError(f"{run_dir} does not record the sizes of its built-in model (no {MODEL_RECORD})",
                              hint="build the model yourself and pass it: torchwise.load_model(run_dir, model)")
    return build_model(cfg.model, sample_shape=tuple(record.get("sample_shape", ())),
                       out_features=record.get("out_features", 0), base_dir=cfg.base_dir)


def with_run_options(run_dir: Path, model: nn.Module) -> nn.Module:
    """A model passed to `load_model` gets the run's ``model.lora`` adapters (peft's wrapper), so
    that the checkpoint's adapter weights have their place; the config is read as data (the
    options name no code)."""
    from torchwise.config import LoraConfig, ModelConfig
    from torchwise.models import with_options
    from torchwise.runs.trust import read_run_config

    lora = (read_run_config(run_dir).get("model") or {}).get("lora")
    if not lora or hasattr(model, "peft_config"):
        return model
    return with_options(model, ModelConfig(name=None, lora=LoraConfig(**lora)))


def model_record(model: nn.Module, *, from_config: bool, sample_shape: tuple[int, ...] | None,
                 out_features: int | None) -> dict:
    """What `build_run_model` needs later, written to the run folder by the run."""
    cls = type(model)
    return {"source": "config" if from_config else "python", "class": f"{cls.__module__}:{cls.__qualname__}",
            "sample_shape": list(sample_shape) if sample_shape is not None else None,
            "out_features": out_features}


def load_weights(model: nn.Module, checkpoint: Checkpoint) -> None:
    """``model.load_state_dict`` after checking every key and shape; tied weights stay tied."""
    from torchwise.checkpoints.compare import compare_state_dicts

    report = compare_state_dicts(model.state_dict(), checkpoint.model_state)
    if not report.ok:
        raise WeightsMismatch(
            f"the weights in {checkpoint.path} do not fit {type(model).__name__}: {report.describe()}",
            report=report,
            hint="pass a model built as the run built it (the same class and arguments); "
                 "the run's config.yaml and model.json record what it used")
    model.load_state_dict(checkpoint.model_state, strict=True)
