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
from torchwise.data.batch import call_model, collate, split_batch
from torchwise.data.batch import to_device as move_batch
from torchwise.data.loaders import plain_tensors
from torchwise.data.streams import is_stream, peek
from torchwise.errors import DataError
from torchwise.train.precision import Precision, pick_device
from torchwise.train.tasks import Task


@dataclass
class Workload:
    """One model on one dataset with its task (the loss), optimizer, device and precision."""

    model: nn.Module
    dataset: Dataset
    task: Task
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

    peeked: list[Any] = field(default_factory=list)  # a stream's first samples, read once

    def size(self) -> int | None:
        """Samples in the dataset; None for a stream, which has no length."""
        return None if is_stream(self.dataset) else len(self.dataset)  # type: ignore[arg-type]


def from_config(cfg: RunConfig) -> Workload:
    """The workload `torchwise train CONFIG` would train: data, model, task and optimizer from ``cfg``."""
    from torchwise.data.prepare import prepare_data
    from torchwise.models import build_model
    from torchwise.reproducibility import seed_everything
    from torchwise.train.optim import build_optimizer, build_scheduler
    from torchwise.train.tasks import build_task

    seed_everything(cfg.train.seed)
    data = prepare_data(cfg)
    model = build_model(cfg.model, sample_shape=data.sample_shape, out_features=data.out_features,
                        base_dir=cfg.base_dir)
    device = pick_device(cfg.train.device)
    model = model.to(device)
    optimizer = build_optimizer(model, cfg.optim, base_dir=cfg.base_dir)
    return Workload(model=model, dataset=data.train, task=build_task(cfg.task, base_dir=cfg.base_dir).to(device),
                    optimizer=optimizer, device=device, precision=Precision.resolve(cfg.train.precision, device),
                    cfg=cfg, scheduler=build_scheduler(optimizer, cfg.schedule, base_dir=cfg.base_dir))


def from_objects(model: nn.Module, data: Dataset | DataLoader, *, config: Any = None, loss: Any = None,
                 optimizer: Any = None, scheduler: Any = None) -> Workload:
    """A workload from a Python user's own model and data (a Dataset or a DataLoader).

    ``config``, ``loss``, ``optimizer`` and ``scheduler`` are what `fit` takes; ``optimizer`` and
    ``scheduler`` may also be the instances you already train with (a tuner then restores them).
    Without an optimizer instance the model is moved to the configured device.
    """
    from torchwise.api import resolve_config
    from torchwise.train.optim import build_optimizer, build_scheduler
    from torchwise.train.tasks import build_task

    cfg = resolve_config(config)
    device = pick_device(cfg.train.device)
    if isinstance(optimizer, torch.optim.Optimizer):
        device = next((p.device for p in model.parameters()), device)
    else:
        model = model.to(device)
        optimizer = build_optimizer(model, cfg.optim, factory=optimizer, base_dir=cfg.base_dir)
    if scheduler is not None and not hasattr(scheduler, "state_dict"):
        scheduler = build_scheduler(optimizer, cfg.schedule, factory=scheduler, base_dir=cfg.base_dir)
    dataset = data.dataset if isinstance(data, DataLoader) else data
    collate_fn = data.collate_fn if isinstance(data, DataLoader) and data.collate_fn is not None else collate
    task = build_task(cfg.task, base_dir=cfg.base_dir, loss=loss).to(device)
    return Workload(model=model, dataset=dataset, task=task, optimizer=optimizer, device=device,
                    precision=Precision.resolve(cfg.train.precision, device), cfg=cfg,
                    collate_fn=_plain_collate(collate_fn), scheduler=scheduler)


def _plain_collate(collate_fn: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    # torchwise's own loaders hand whole batches over (`whole_batch`); a list of samples needs collating.
    from torchwise.data.loaders import whole_batch

    return collate if collate_fn is whole_batch else collate_fn


def sample_batch(work: Workload, size: int, *, offset: int = 0) -> Any:
    """``size`` samples from ``offset`` on (wrapping around a dataset shorter than that), collated
    as the loader collates them, on the workload's device. A stream is read from its start (it
    has no index), as far as needed."""
    dataset = work.dataset
    if is_stream(dataset):
        return to_device(work, work.collate_fn(_stream_samples(work, offset, size)))
    total = work.size()
    if total == 0:
        raise DataError("the training set is empty", hint="check the data source")
    indices = [(offset + i) % total for i in range(size)]
    getitems = getattr(dataset, "__getitems__", None)
    if plain_tensors(dataset):  # exactly a TensorDataset: a subclass's __getitem__ must run
        index = torch.tensor(indices)
        batch: Any = tuple(t[index] for t in dataset.tensors)
        batch = batch if len(batch) != 2 else (batch[0], batch[1])
    elif getitems is not None:
        batch = work.collate_fn(getitems(indices))
    else:
        batch = work.collate_fn([dataset[i] for i in indices])
    return to_device(work, batch)


def _stream_samples(work: Workload, offset: int, size: int) -> list[Any]:
    """Samples ``offset`` to ``offset + size`` of a stream, wrapping around one shorter than that."""
    wanted = offset + size
    if len(work.peeked) < wanted:
        work.peeked = peek(work.dataset, max(wanted, 2 * len(work.peeked)))  # type: ignore[arg-type]
    if not work.peeked:
        raise DataError("the training stream yields no sample", hint="check the stream's __iter__")
    return [work.peeked[i % len(work.peeked)] for i in range(offset, wanted)]


def run_loader(work: Workload, batch_size: int, *, num_workers: int | None = None,
               persistent_workers: bool | None = None) -> DataLoader:
    """The loader a run builds for this data: `build_loader` (whole-batch indexing for tensors, the
    seeded order, the configured workers and pinning), with the workload's collate otherwise."""
    from torchwise.data.loaders import build_loader

    cfg = work.cfg
    pin = cfg.data.pin_memory if cfg.data.pin_memory != "auto" else work.device.type == "cuda"
    loader = build_loader(work.dataset, batch_size=batch_size, shuffle=cfg.data.shuffle, seed=cfg.train.seed,
                          num_workers=cfg.data.num_workers if num_workers is None else num_workers, pin_memory=pin,
                          persistent_workers=cfg.data.persistent_workers if persistent_workers is None
                          else persistent_workers)
    if not plain_tensors(work.dataset):
        loader.collate_fn = work.collate_fn
    return loader


def to_device(work: Workload, batch: Any) -> Any:
    """The batch on the workload's device, float64 cast to the model's dtype as the loop casts it."""
    return move_batch(batch, work.device, float64_to=_float_dtype(work.model))


def _float_dtype(model: nn.Module) -> torch.dtype | None:
    """float64 inputs (numpy's default) meet a float32 model as the loop makes them: cast."""
    dtype = next((p.dtype for p in model.parameters() if p.is_floating_point()), None)
    return dtype if dtype is not None and dtype != torch.float64 else None


def step_loss(work: Workload, batch: Any) -> torch.Tensor:
    """Forward under autocast and the loss, as the loop computes it (`Task.loss`: the user's loss,
    else the model's own ``loss``, else the task's loss on the logits)."""
    inputs, target = split_batch(batch)
    with work.precision.autocast():
        return work.task.loss(call_model(work.model, inputs), target)


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
