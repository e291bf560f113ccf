"""Streams: an `IterableDataset` (or a DataLoader over one) has no length and no index.

An epoch is one pass of the stream. Without a length the run cannot know its steps in advance,
so a schedule that spans the run needs ``train.max_steps``; with it the run is step-based (as
in HF Trainer, ``max_steps`` then overrides ``train.epochs``: the stream is read again as often
as needed). Everything that only needs a batch (preflight, tune, summary) peeks at the stream.

Sharding is the stream's job: with ``num_workers > 0`` every worker runs the dataset's
``__iter__`` on its own copy, and under torchrun every process does; a stream that does not
split itself yields every sample once per worker and per process. ``stream_part()`` says which
part is this worker's (torch's ``get_worker_info()`` and torchrun's ``RANK``/``WORLD_SIZE``).
torchwise checks the first batch of two workers and warns when they are the same.

Exact resume mid-stream needs the stream to say where it is: a dataset (or loader) with
``state_dict()`` / ``load_state_dict()`` is read through torchdata's ``StatefulDataLoader``
(the ``streaming`` extra), whose state goes into the checkpoint. Any other stream restarts the
interrupted epoch, with a warning event.

>>> import torch
>>> from torch.utils.data import IterableDataset
>>> class Count(IterableDataset):
...     def __iter__(self):
...         return iter((torch.tensor([float(i)]), torch.tensor(i % 2)) for i in range(5))
>>> is_stream(Count()), [float(x) for x, _ in peek(Count(), 2)]
(True, [0.0, 1.0])
"""

from __future__ import annotations

import copy
import itertools
import os
import warnings
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset

from torchwise.config import RunConfig
from torchwise.data.batch import tensors
from torchwise.errors import ConfigError

# Schedules whose LR at a step depends on the run's total steps.
SPANNING_SCHEDULES = ("linear", "cosine", "warmup-cosine", "one-cycle")


def is_stream(data: Dataset | DataLoader | None) -> bool:
    """True for an `IterableDataset`, or a DataLoader that reads one."""
    dataset = data.dataset if isinstance(data, DataLoader) else data
    return isinstance(dataset, IterableDataset)


def stream_part() -> tuple[int, int]:
    """(part, parts): the share of a stream this DataLoader worker of this process reads.

    Every worker of every process runs the stream's ``__iter__``; with ``parts`` of them, part
    ``rank * workers + worker`` reads every ``parts``-th sample, and together they read each
    sample once. The rank comes from torchrun's environment (workers inherit it, while the
    process group lives only in the main process); one plain process is rank 0 of 1.

    >>> stream_part()  # this process, outside a DataLoader worker and outside torchrun
    (0, 1)
    """
    info = torch.utils.data.get_worker_info()
    worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    return rank * workers + worker, world * workers


def is_stateful(data: Any) -> bool:
    """The object can say where it is and go back there (torchdata's Stateful protocol)."""
    return callable(getattr(data, "state_dict", None)) and callable(getattr(data, "load_state_dict", None))


def batches_in_epoch(loader: DataLoader) -> int | None:
    """The loader's length, or None for a stream that has none."""
    try:
        return len(loader)
    except TypeError:
        return None


def step_based(cfg: RunConfig, loader: DataLoader) -> bool:
    """A stream with ``train.max_steps`` runs for that many steps, whatever ``train.epochs`` says."""
    return is_stream(loader) and cfg.train.max_steps is not None


def check_schedule(cfg: RunConfig, loader: DataLoader, *, own_scheduler: bool) -> None:
    """A stream of unknown length cannot carry a schedule that spans the run without max_steps."""
    if (batches_in_epoch(loader) is None and cfg.train.max_steps is None and not own_scheduler
            and cfg.schedule.name in SPANNING_SCHEDULES):
        raise ConfigError(
            f"the training data is a stream of unknown length, so the {cfg.schedule.name} schedule cannot "
            "know how many steps the run has",
            hint="set train.max_steps=N (the run is then step-based and the schedule spans N steps), "
                 "or schedule.name=constant to train by epochs")


def peek(dataset: IterableDataset, count: int) -> list[Any]:
    """The stream's first ``count`` samples, read in this process; a stateful stream is put back
    where it was, so the run still starts at its beginning."""
    if type(dataset).__module__.split(".")[0] == "datasets":
        # Hugging Face's IterableDataset: read through take(), a view with a state of its own (its
        # state_dict() after a load_state_dict is the old position, so save-and-restore would
        # silently skip the peeked samples of the first epoch).
        return list(dataset.take(count))  # type: ignore[attr-defined]
    saved = copy.deepcopy(dataset.state_dict()) if is_stateful(dataset) else None
    samples = list(itertools.islice(iter(dataset), count))
    if saved is not None:
        dataset.load_state_dict(saved)
    return samples


def build_stream_loader(dataset: IterableDataset, *, batch_size: int, seed: int, num_workers: int,
                        pin_memory: bool, collate_fn: Any, worker_init_fn: Any) -> DataLoader:
    """A DataLoader over a stream: torchdata's StatefulDataLoader when the stream is stateful and
    torchdata is installed (exact mid-epoch resume), else a plain one.

    Workers are not persistent: each epoch's workers copy the dataset again, so a ``set_epoch``
    the loop calls on it reaches them.
    """
    loader_class: type[DataLoader] = DataLoader
    if is_stateful(dataset):
        try:
            from torchdata.stateful_dataloader import StatefulDataLoader
        except ImportError:
            pass  # resume restarts the epoch; the resume says so and names the extra
        else:
            # torchdata 0.11 calls a torch API that torch 2.13 deprecated, warning on every epoch.
            warnings.filterwarnings("ignore", message="'set_vital' is deprecated", category=UserWarning)
            loader_class = StatefulDataLoader
    return loader_class(dataset, batch_size=batch_size, collate_fn=collate_fn, num_workers=num_workers,
                        pin_memory=pin_memory, worker_init_fn=worker_init_fn,
                        generator=torch.Generator().manual_seed(seed))


def loader_state(loader: DataLoader) -> dict[str, Any] | None:
    """Where a stateful loader is (for the checkpoint); None for any other loader."""
    return loader.state_dict() if is_stateful(loader) else None


def restore_loader(loader: DataLoader, state: dict[str, Any] | None) -> bool:
    """Put a stateful loader back where the checkpoint left it; False when that cannot be done."""
    if state is None or not is_stateful(loader):
        return False
    loader.load_state_dict(state)
    return True


def workers_repeat(loader: DataLoader) -> bool:
    """True when the first batches of two workers are equal: the stream does not shard itself.

    Workers hand batches over in turn, so the first two batches come from workers 0 and 1.
    """
    if not is_stream(loader) or loader.num_workers < 2:
        return False
    batches = iter(loader)
    first, second = next(batches, None), next(batches, None)
    del batches  # shuts the workers down
    if first is None or second is None:
        return False
    a, b = tensors(first), tensors(second)
    return len(a) == len(b) and all(x.shape == y.shape and torch.equal(x, y) for x, y in zip(a, b, strict=True))


def resume_hint(loader: DataLoader, *, distributed: bool = False) -> str:
    """Why a stream restarts its epoch on resume, and what would make it continue instead."""
    dataset = loader.dataset
    if distributed:
        return "under torchrun each process's place in its stream is not saved, so the epoch restarts"
    if is_stateful(dataset) and not is_stateful(loader):
        return "install torchwise[streaming] (torchdata) for an exact resume of this stateful stream"
    return ("give the dataset state_dict()/load_state_dict() (torchdata's Stateful protocol) for an "
            "exact resume mid-stream")
