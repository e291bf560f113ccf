"""What every tuner measures: the model, its data, the loss and the optimizer, built as a run builds them.

A `Workload` comes from a config (the CLI: the same data, model, task, optimizer, device and
precision that `torchwise train` would use) or from the objects a Python user holds
(`from_objects`). `sample_batch` takes any number of samples from the dataset, and `train_step`
runs one real optimizer step on a batch in the loop's order (autocast forward, loss, backward,
unscale, clip, step, zero_grad). Batches of any structure `fit` accepts go through
`torchwise.data.batch`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from torchwise.config import RunConfig
from torchwise.data.batch import call_model, collate, output_logits, output_loss, split_batch
from torchwise.data.batch import to_device as move_batch
from torchwise.errors import ConfigError, DataError
from torchwise.train.precision import Precision, pick_device

LossFn = Callable[[Any, Any], torch.Tensor]


@dataclass
class Workload:
    """One model on one dataset with its loss, optimizer, device and precision."""

    model: nn.Module
    dataset: Dataset
    loss_fn: LossFn | None
    optimizer: torch.optim.Optimizer
    device: torch.device
    precision: Precision
    cfg: RunConfig
    collate_fn: Callable[[list[Any]], Any] = collate
    scheduler: Any = None
    scaler: Any = None
    params: list[torch.Tensor] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.params = [p for group in self.optimizer.param_groups for p in group["params"]]
        if self.scaler is None:
            self.scaler = self.precision.make_scaler()

    def __len__(self) -> int:
        return len(self.dataset)  # type: ignore[arg-type]


def from_config(cfg: RunConfig) -> Workload:
    """The workload `torchwise train CONFIG` would train: data, model, task and optimizer from ``cfg``."""
    from torchwise.data.prepare import prepare_data
    from torchwise.models import build_model
    from torchwise.reproducibility import seed_everything
    from torchwise.train.optim import build_optimizer
    from torchwise.train.tasks import build_task

    seed_everything(cfg.train.seed)
    data = prepare_data(cfg)
    if data.out_features is None:
        raise ConfigError("cannot tell the number of classes of this dataset for a built-in model",
                          hint="set task.num_classes")
    model = build_model(cfg.model, sample_shape=data.sample_shape, out_features=data.out_features,
                        base_dir=cfg.base_dir)
    device = pick_device(cfg.train.device)
    model = model.to(device)
    task = build_task(cfg.task, base_dir=cfg.base_dir)
    return Workload(model=model, dataset=data.train, loss_fn=task.loss, optimizer=build_optimizer(model, cfg.optim),
                    device=device, precision=Precision.resolve(cfg.train.precision, device), cfg=cfg)


def from_objects(model: nn.Module, data: Dataset | DataLoader, *, config: Any = None,
                 loss_fn: LossFn | None = None, optimizer: torch.optim.Optimizer | None = None,
                 scheduler: Any = None) -> Workload:
    """A workload from a Python user's own model and data (a Dataset or a DataLoader).

    ``config`` is what `fit` takes (a dict shaped like the YAML, a `RunConfig` or a path); without
    ``loss_fn`` the task's loss is used unless the model returns its own ``loss``; without
    ``optimizer`` the configured one is built (the model is not moved when one is given).
    """
    from torchwise.api import resolve_config
    from torchwise.train.optim import build_optimizer
    from torchwise.train.tasks import build_task

    cfg = resolve_config(config)
    device = pick_device(cfg.train.device)
    if optimizer is None:
        model = model.to(device)
        optimizer = build_optimizer(model, cfg.optim)
    else:
        device = next((p.device for p in model.parameters()), device)
    dataset = data.dataset if isinstance(data, DataLoader) else data
    collate_fn = data.collate_fn if isinstance(data, DataLoader) and data.collate_fn is not None else collate
    if loss_fn is None:
        loss_fn = build_task(cfg.task, base_dir=cfg.base_dir).loss
    return Workload(model=model, dataset=dataset, loss_fn=loss_fn, optimizer=optimizer, device=device,
                    precision=Precision.resolve(cfg.train.precision, device), cfg=cfg,
                    collate_fn=_plain_collate(collate_fn), scheduler=scheduler)


def _plain_collate(collate_fn: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    # torchwise's own loaders hand whole batches over (`whole_batch`); a list of samples needs collating.
    from torchwise.data.loaders import whole_batch

    return collate if collate_fn is whole_batch else collate_fn


def sample_batch(work: Workload, size: int, *, offset: int = 0) -> Any:
    """``size`` samples from ``offset`` on (wrapping around a dataset shorter than that), collated
    as the loader collates them, on the workload's device."""
    total = len(work)
    if total == 0:
        raise DataError("the training set is empty", hint="check the data source")
    indices = [(offset + i) % total for i in range(size)]
    dataset = work.dataset
    getitems = getattr(dataset, "__getitems__", None)
    if isinstance(dataset, torch.utils.data.TensorDataset):
        index = torch.tensor(indices)
        batch: Any = tuple(t[index] for t in dataset.tensors)
        batch = batch if len(batch) != 2 else (batch[0], batch[1])
    elif getitems is not None:
        batch = work.collate_fn(getitems(indices))
    else:
        batch = work.collate_fn([dataset[i] for i in indices])
    return move_batch(batch, work.device)


def step_loss(work: Workload, batch: Any) -> torch.Tensor:
    """Forward under autocast and the loss: the model's own ``loss`` when it returns one, else the
    workload's loss function on (logits, target)."""
    inputs, target = split_batch(batch)
    with work.precision.autocast():
        output = call_model(work.model, inputs)
        loss = output_loss(output)
        if loss is None:
            if work.loss_fn is None or target is None:
                raise DataError("the model returned no loss and the batch holds no target",
                                hint="return (inputs, target) from the dataset, or a `loss` from the model")
            loss = work.loss_fn(output_logits(output), target)
    return loss


def backward(work: Workload, loss: torch.Tensor) -> None:
    work.scaler.scale(loss).backward()


def optimizer_step(work: Workload) -> None:
    """Unscale, clip as the run would (train.clip_grad_norm), step, update the scaler, zero_grad."""
    work.scaler.unscale_(work.optimizer)
    if work.cfg.train.clip_grad_norm:
        torch.nn.utils.clip_grad_norm_(work.params, work.cfg.train.clip_grad_norm, foreach=True)
    work.scaler.step(work.optimizer)
    work.scaler.update()
    work.optimizer.zero_grad(set_to_none=True)


def train_step(work: Workload, batch: Any) -> torch.Tensor:
    """One real optimizer step on ``batch``; returns the loss (detached, on the device)."""
    loss = step_loss(work, batch)
    backward(work, loss)
    optimizer_step(work)
    return loss.detach()
