"""The Python API: `fit` trains a plain nn.Module on a Dataset or DataLoader.

>>> import torch, tempfile
>>> from torch.utils.data import TensorDataset
>>> x = torch.randn(64, 3); y = x @ torch.tensor([[1.0], [2.0], [3.0]])
>>> result = fit(torch.nn.Linear(3, 1), TensorDataset(x, y), config={"task": {"type": "regression"},
...     "train": {"epochs": 2}, "log": {"progress": "off"}}, runs_dir=tempfile.mkdtemp())
>>> result.status, result.summary["epochs"]
('completed', 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from torchwise.config import RunConfig, load_config


def fit(model: Any, train_data: Any, val_data: Any = None, *,
        config: RunConfig | dict[str, Any] | str | Path | None = None,
        overrides: Sequence[str] = (), runs_dir: str | Path = "runs", name: str | None = None,
        quiet: bool = False, resume: str | Path | None = None, loss: Any = None, optimizer: Any = None,
        scheduler: Any = None, metrics: dict[str, Any] | None = None, trust_code: bool = False,
        tokenizer: Any = None) -> Any:
    """Train ``model`` with every torchwise default on, and write a run folder.

    ``config`` is a `RunConfig`, a dict shaped like the YAML, or a YAML path; its ``data`` and
    ``model`` sections are not used (you pass them in). Returns a `RunResult` with the run's
    folder, its summary and its best metric.

    Your own pieces, each in place of the config's:

    - ``loss``: a module or function ``loss(output, target)``; it sees the model's output as it is
      (without it: the model's own ``loss`` when its output has one, else the task's loss).
    - ``optimizer``: a function of torchwise's parameter groups (no weight decay on biases and
      norms, LR multipliers applied), e.g. ``lambda groups: torch.optim.RMSprop(groups, lr=1e-3)``.
    - ``scheduler``: a function of the optimizer, e.g. ``lambda opt: StepLR(opt, 100)``; stepped after
      every optimizer step, except ``ReduceLROnPlateau``, stepped on ``train.monitor`` at each evaluation.
    - ``metrics``: ``{name: metric}`` logged as ``val_<name>``: a ``torchmetrics.Metric``, or a function
      ``fn(logits, target)`` returning a batch's mean (averaged over samples).

    Hugging Face ``datasets`` (a Dataset, DatasetDict or IterableDataset) are taken as they are:
    ``label`` is the target, columns ``model.forward`` does not take are dropped, and with a
    ``tokenizer`` rows of different lengths are padded by transformers' own collator.

    config.yaml records each by qualified name (and arguments where it can, with a note where it
    cannot). ``resume=RUN_DIR`` continues that run from its last checkpoint with the run's own config
    (``overrides`` may only extend it); pass the same model class, data and objects as the first time.
    Code the run's config names beyond them (a loss target) is imported only from a run folder you
    wrote, or with ``trust_code=True`` (see "Sharing runs safely" in the README).
    A ``config`` or ``name`` next to ``resume`` is refused: the run's own config.yaml decides.
    """
    from torchwise.hf.data import is_hf_data
    from torchwise.train.run import UserObjects, run_training

    if is_hf_data(train_data) or is_hf_data(val_data):
        from torchwise.hf.data import hf_datasets

        train_data, val_data = hf_datasets(train_data, val_data, tokenizer=tokenizer, model=model)

    objects = UserObjects(loss=loss, optimizer=optimizer, scheduler=scheduler, metrics=metrics)
    if resume is not None and (config is not None or name is not None):
        from torchwise.errors import ConfigError

        given = " and ".join(arg for arg, value in (("config", config), ("name", name)) if value is not None)
        raise ConfigError(f"fit(resume=...) continues the run with its own config.yaml; {given} would be ignored",
                          hint="drop it, and pass what may change as overrides, e.g. "
                               "overrides=['train.epochs=40', 'early_stop.patience=10']")
    if resume is not None:
        from torchwise.train.resume import load_run_config

        # What you pass again is not imported from the config (nor checked by the trust gate).
        passed = {"task.loss": loss, "optim": optimizer, "schedule": scheduler, "task.metrics": metrics}
        skip = ("model", "data", *(section for section, obj in passed.items() if obj is not None))
        cfg = load_run_config(Path(resume), list(overrides), trust_code=trust_code, skip=skip)
        return run_training(cfg, resume_dir=Path(resume), model=model, train_data=train_data,
                            val_data=val_data, progress="off" if quiet else None, objects=objects)
    # A copy: the run records its own choices (data source, a changed monitor, OOM splits) in it.
    cfg = resolve_config(config, overrides).model_copy(deep=True)
    cfg.data.source = "python"  # recorded in config.yaml: the data came from the caller
    cfg.model.name = None
    return run_training(cfg, runs_dir=Path(runs_dir), name=name or cfg.name or "fit", model=model,
                        train_data=train_data, val_data=val_data, progress="off" if quiet else None,
                        objects=objects)


def resolve_config(config: RunConfig | dict[str, Any] | str | Path | None,
                   overrides: Sequence[str] = ()) -> RunConfig:
    if isinstance(config, RunConfig):
        return load_config(None, overrides, base=config.to_yaml_dict()) if overrides else config
    if isinstance(config, (str, Path)):
        return load_config(config, overrides)
    return load_config(None, overrides, base=config or {})
