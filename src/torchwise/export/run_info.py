"""What export and predict need from a run folder: the model, a real batch, and how to use it.

The model comes from the run's checkpoint (`torchwise.checkpoints.load_model`); the batch from
the run's own validation data (the training data when it has none), rebuilt from its
``config.yaml`` exactly as training built it; the transform from raw features to the model's
input from the data source's scaling and ``data_stats.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from torchwise.config import RunConfig
from torchwise.errors import ExportError, TargetError
from torchwise.export.manifest import Normalization


@dataclass
class RunInfo:
    """A run's model in eval mode on the CPU, one batch of its real inputs, and its manifest fields."""

    run_dir: Path
    cfg: RunConfig
    model: torch.nn.Module
    example: Any
    data: str
    normalization: Normalization | None
    task: dict[str, Any]
    describe: dict[str, Any]


def read_run(run_dir: Path, *, checkpoint: str = "best", model: torch.nn.Module | None = None,
             example_inputs: Any = None, shape_only: bool = False, trust_code: bool = False,
             python_inputs: Any = None) -> RunInfo:
    """Load the run's model (into ``model`` for a run trained from Python) and a batch of its data;
    ``example_inputs`` stands in for the data of a run whose data came from Python. With
    ``shape_only`` (predict needs the input's shape, not its values) such a run takes the
    ``python_inputs`` it will be given, else a batch of zeros shaped as the samples the run
    recorded. ``trust_code`` accepts the code a folder that this user did not write names (see
    `run_config`)."""
    from torchwise.checkpoints.load import load_model

    cfg = run_config(run_dir, trust_code=trust_code)  # the trust gate, before anything is imported
    try:
        model = load_model(run_dir, model, which=checkpoint, device="cpu",  # type: ignore[arg-type]
                           trust_code=trust_code)
    except TargetError as err:
        raise model_not_importable(cfg, err) from err
    num_classes, target = None, None
    if example_inputs is not None:
        example, data = example_inputs, "the example inputs"
    else:
        example, target, data, num_classes = real_batch(cfg, run_dir, shape_only=shape_only,
                                                        python_inputs=python_inputs)
    example = without_optional_labels(model, example)
    describe = {"feature_names": _feature_names(cfg), "target_name": _target_name(cfg),
                "source": source_fields(run_dir, checkpoint)}
    task = task_fields(cfg, run_dir, num_classes=num_classes)
    if task["type"] == "classification":
        task.update(class_layout(model, example, target, num_classes=len(task["classes"] or []) or None,
                                 ignore_index=cfg.task.ignore_index))
    return RunInfo(run_dir=run_dir, cfg=cfg, model=model, example=example, data=data,
                   normalization=normalization(cfg, run_dir, example), task=task, describe=describe)


def without_optional_labels(model: torch.nn.Module, inputs: Any) -> Any:
    """Dict inputs less their ``labels`` when ``forward`` can go without them (``labels=None``, HF
    style): training fed them so that the model computed its loss, but the artefact is for
    inference, and a caller of it has no labels. A forward that requires them keeps them.

    >>> class Net(torch.nn.Module):
    ...     def forward(self, input_ids, labels=None): ...
    >>> without_optional_labels(Net(), {"input_ids": 1, "labels": 2})
    {'input_ids': 1}
    """
    import inspect

    from torchwise.data.batch import TARGET_KEY

    if not isinstance(inputs, dict) or TARGET_KEY not in inputs:
        return inputs
    parameter = inspect.signature(model.forward).parameters.get(TARGET_KEY)
    if parameter is None or parameter.default is inspect.Parameter.empty:
        return inputs
    return {key: value for key, value in inputs.items() if key != TARGET_KEY}


def model_not_importable(cfg: RunConfig, err: TargetError) -> ExportError:
    """The run's model class cannot be imported here: name the class, its module, and the folder."""
    target = cfg.model.target or ""
    module, _, name = target.partition(":")
    folder = f" (the run found it in {cfg.base_dir})" if cfg.base_dir is not None else ""
    return ExportError(f"the run's model {name} cannot be imported: {err.message}",
                       hint=f"put the folder that holds module {module!r}{folder} on PYTHONPATH, "
                            "or run torchwise from that folder")


def run_config(run_dir: Path, *, trust_code: bool = False) -> RunConfig:
    """The run's config, through the trust gate: a folder this user did not write, whose config
    names code, stops here with the list of what it would import (`torchwise.runs.trust`)."""
    from torchwise.runs.trust import open_run_config

    return open_run_config(run_dir, trust_code=trust_code)


def real_batch(cfg: RunConfig, run_dir: Path, *, shape_only: bool = False,
               python_inputs: Any = None) -> tuple[Any, Any, str, int | None]:
    """Up to one training batch of the run's validation samples (training samples without a
    validation split), prepared as training prepared them: inputs, target, where they came from,
    and the number of classes."""
    from torchwise.checkpoints.load import read_model_record
    from torchwise.data.batch import collate, split_batch
    from torchwise.data.prepare import prepare_data

    if cfg.data.source == "python":
        if shape_only and python_inputs is not None:
            return python_inputs, None, "the inputs given", None
        shape = read_model_record(run_dir).get("sample_shape")
        if shape_only and shape:  # one tensor input, of the shape the run recorded
            return torch.zeros(2, *shape), None, "zeros", None
        hint = (f"predict from Python with the inputs in memory: torchwise.predict('{run_dir}', inputs, model=...)"
                if shape_only else "pass a batch of real inputs from Python: "
                f"torchwise.export_run('{run_dir}', model=..., example_inputs=x)")
        raise ExportError(f"the data of {run_dir.name} came from Python (torchwise.fit), so torchwise cannot "
                          "read a batch of it" + (" to verify the artefact" if not shape_only else
                                                  " to learn the structure of its model's inputs"), hint=hint)
    prepared = prepare_data(cfg)
    dataset, split = (prepared.val, "validation") if prepared.val is not None else (prepared.train, "training")
    count = min(len(dataset), max(2, cfg.train.batch_size))  # type: ignore[arg-type]
    inputs, target = split_batch(collate([dataset[i] for i in range(count)]))
    return inputs, target, f"the {split} data of {run_dir.name}", prepared.num_classes


def class_layout(model: torch.nn.Module, example: Any, target: Any, *, num_classes: int | None,
                 ignore_index: int) -> dict[str, Any]:
    """Where a classifier's outputs hold the classes, when they are more than ``[B, C]``:
    ``class_dim`` 1 for ``[B, C, d1, ...]`` (segmentation), -1 for ``[B, T, C]`` (sequences), read
    as training read it against a real target; without one, the dim whose size is the number of
    classes (1, cross-entropy's own layout, when both are). With it the target value that accuracy
    skips (padding, void pixels). Nothing for ``[B, C]``."""
    from torchwise.data.batch import call_model, output_logits
    from torchwise.train.metrics import class_dim

    with torch.no_grad():
        logits = output_logits(call_model(model, example))
    if not isinstance(logits, torch.Tensor) or logits.dim() <= 2:
        return {}
    if isinstance(target, torch.Tensor):
        dim = class_dim(logits, target)
    else:
        dim = -1 if logits.shape[-1] == num_classes and logits.shape[1] != num_classes else 1
    return {"class_dim": dim, "ignore_index": ignore_index}


def normalization(cfg: RunConfig, run_dir: Path, example: Any) -> Normalization | None:
    """The source's own scaling, then the training split's standardisation (identity when off);
    None for inputs that are not one float tensor (nothing is applied to those)."""
    from torchwise.data.sources import input_scale

    if not isinstance(example, torch.Tensor) or not example.is_floating_point():
        return None
    scale = input_scale(cfg.data)
    stats = _data_stats(run_dir)
    if "mean" in stats:
        return Normalization(scale=scale, mean=stats["mean"], std=stats["std"])
    identity = Normalization.identity(tuple(example.shape[1:]))
    return Normalization(scale=scale, mean=identity.mean, std=identity.std)


def task_fields(cfg: RunConfig, run_dir: Path, *, num_classes: int | None) -> dict[str, Any]:
    """What the output means: class names (classification, multilabel) or target names (regression)."""
    if cfg.task.type == "multilabel":  # a yes/no logit per label, named where the run kept the names
        return {"type": "multilabel", "classes": _class_names(run_dir)}
    if cfg.task.type == "classification":
        count = cfg.task.num_classes or num_classes
        names = _class_names(run_dir)
        if names is None and count is not None:
            names = [str(i) for i in range(count)]
        return {"type": "classification", "classes": names}
    target = _target_name(cfg)
    return {"type": "regression", "targets": [target] if target else None}


def source_fields(run_dir: Path, checkpoint: str) -> dict[str, Any]:
    """The run and checkpoint an artefact came from."""
    from torchwise.checkpoints.checkpoint import read_meta
    from torchwise.runs.reader import check_summary
    from torchwise.runs.safe_io import read_json_or_none

    meta = read_meta(run_dir / "checkpoints" / checkpoint)
    summary = check_summary(run_dir / "summary.json", read_json_or_none(run_dir / "summary.json") or {})
    return {"run": str(run_dir.resolve()), "run_name": run_dir.name, "checkpoint": checkpoint,
            "epoch": meta.get("epoch"), "step": meta.get("step"), "config_hash": meta.get("config_hash"),
            "best": summary.get("best")}


def _data_stats(run_dir: Path) -> dict[str, Any]:
    """``data_stats.json``: the standardisation and the class names the run kept."""
    from torchwise.runs.safe_io import FolderFileError, read_json_or_none, sample_elements

    path = run_dir / "data_stats.json"
    stats = read_json_or_none(path) or {}
    if stats.get("classes") is not None and not isinstance(stats["classes"], list):
        raise FolderFileError(f"{path}: classes is not a list", hint="restore the file from the run's owner")
    for key in ("mean", "std"):
        if key in stats:
            sample_elements(path, _nested_shape(path, stats[key]))
    return stats


def _nested_shape(path: Path, value: Any) -> list[int]:
    """The shape of nested lists of numbers, or `FolderFileError` where they are not."""
    from torchwise.runs.safe_io import FolderFileError

    shape, level = [], value
    while isinstance(level, list):
        shape.append(len(level))
        level = level[0] if level else 0.0
    if not isinstance(level, (int, float)) or isinstance(level, bool):
        raise FolderFileError(f"{path}: the standardisation is not nested lists of numbers",
                              hint="restore the file from the run's owner")
    return shape


def _class_names(run_dir: Path) -> list[str] | None:
    classes = _data_stats(run_dir).get("classes")
    return [str(name) for name in classes] if classes is not None else None


def _feature_names(cfg: RunConfig) -> list[str] | None:
    from torchwise.data.sources import feature_names

    return feature_names(cfg.data, cfg=cfg)


def _target_name(cfg: RunConfig) -> str | None:
    from torchwise.data.sources import target_name

    return target_name(cfg.data, cfg=cfg)
