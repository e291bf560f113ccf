"""DataLoaders whose order is a pure function of (seed, epoch, position), so runs repeat and resume.

>>> sampler = EpochSampler(5, seed=0, shuffle=True)
>>> sampler.set_epoch(0); a = list(sampler)
>>> sampler.set_epoch(0, start=2); a[2:] == list(sampler)
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, Sampler, Subset, TensorDataset

from torchwise.data.batch import collate
from torchwise.data.streams import build_stream_loader, is_stream
from torchwise.reproducibility import epoch_seed, seed_worker


class EpochSampler(Sampler[int]):
    """Shuffles with a generator seeded from (seed, epoch) and can start mid-epoch.

    State lives here because resume needs it: the epoch and how many samples of it were used.
    """

    def __init__(self, size: int, *, seed: int, shuffle: bool) -> None:
        self.size = size
        self.seed = seed
        self.shuffle = shuffle
        self.epoch = 0
        self.start = 0
        # Under torchrun: this rank's slice (see `shard`); one process is rank 0 of 1.
        self.rank, self.world, self.batch_size = 0, 1, 1

    def set_epoch(self, epoch: int, *, start: int = 0) -> None:
        self.epoch = epoch
        self.start = start

    def shard(self, *, rank: int, world: int, batch_size: int) -> None:
        """Read only this rank's part: of each global batch of ``world * batch_size`` consecutive
        positions, every ``world``-th one from ``rank``. All ranks together read exactly what one
        process reads at batch ``world * batch_size``, with nothing repeated."""
        self.rank, self.world, self.batch_size = rank, world, batch_size

    def order(self) -> list[int]:
        if not self.shuffle:
            return list(range(self.size))
        generator = torch.Generator().manual_seed(epoch_seed(self.seed, self.epoch))
        return torch.randperm(self.size, generator=generator).tolist()

    def __iter__(self) -> Iterator[int]:
        return iter(self.positions(self.order()[self.start:]))

    def positions(self, remaining: list[int]) -> list[int]:
        if self.world == 1:
            return remaining
        step = self.world * self.batch_size
        return [i for g in range(0, len(remaining), step) for i in remaining[g:g + step][self.rank::self.world]]

    def __len__(self) -> int:
        return len(self.positions(list(range(self.size - self.start))))


class BatchedTensors(TensorDataset):
    """A TensorDataset that hands a whole batch over at once: ``x[indices]`` in one indexing op
    instead of one ``__getitem__`` per sample and a ``torch.stack``. Same rows, same order."""

    def __getitems__(self, indices: list[int]) -> tuple[torch.Tensor, ...]:
        index = torch.tensor(indices)
        return tuple(tensor[index] for tensor in self.tensors)


def plain_tensors(dataset: object) -> bool:
    """True for exactly a ``TensorDataset`` (or `BatchedTensors`): the only datasets whose rows may
    be read by batched indexing. A subclass may transform or augment in ``__getitem__``, so it is
    read one ``__getitem__`` per sample like any user Dataset.

    >>> class Flipped(TensorDataset):
    ...     def __getitem__(self, i): return tuple(-t[i] for t in self.tensors)
    >>> plain_tensors(TensorDataset(torch.ones(2))), plain_tensors(Flipped(torch.ones(2)))
    (True, False)
    """
    return type(dataset) in (TensorDataset, BatchedTensors)


def collate_for(dataset: object) -> Any:
    """The collate function a dataset brings (an HF dataset's padding collator, kept through a
    split's Subset), or None."""
    while isinstance(dataset, Subset):
        dataset = dataset.dataset
    return getattr(dataset, "collate_fn", None)


def whole_batch(batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """collate_fn for `BatchedTensors`: the batch is already assembled."""
    return batch


def build_loader(dataset: Dataset, *, batch_size: int, shuffle: bool, seed: int,
                 num_workers: int, pin_memory: bool, persistent_workers: bool) -> DataLoader:
    """A DataLoader with a seeded `EpochSampler`, a seeded generator and seeded workers (for a
    stream, which has no sampler: seeded workers, see `torchwise.data.streams`)."""
    if isinstance(dataset, IterableDataset):
        return build_stream_loader(dataset, batch_size=batch_size, seed=seed, num_workers=num_workers,
                                   pin_memory=pin_memory, collate_fn=collate_for(dataset) or collate,
                                   worker_init_fn=seed_worker if num_workers > 0 else None)
    sampler = EpochSampler(len(dataset), seed=seed, shuffle=shuffle)  # type: ignore[arg-type]
    batched = plain_tensors(dataset)
    return DataLoader(
        BatchedTensors(*dataset.tensors) if batched else dataset,  # type: ignore[attr-defined]
        batch_size=batch_size,
        collate_fn=whole_batch if batched else collate_for(dataset) or collate,
        sampler=sampler,
        num_workers=num_workers,
        pin_memory=pin_memory,
        # Re-spawning workers each epoch costs more than an epoch of a small model.
        persistent_workers=persistent_workers and num_workers > 0,
        worker_init_fn=seed_worker if num_workers > 0 else None,
        generator=torch.Generator().manual_seed(seed),
    )


def start_epoch(loader: DataLoader, *, epoch: int, start: int = 0, seed: int = 0, rank: int = 0) -> None:
    """Point the loader at ``epoch`` (from sample ``start``) and reseed its worker seeds.

    A stream's position is its own (or its StatefulDataLoader's): the stream is told the epoch
    (``set_epoch``, as HF datasets and webdataset take it) and its workers' seeds follow
    (``seed``, ``epoch``, and under torchrun ``rank``) as for map-style data."""
    sampler = loader.sampler
    if isinstance(sampler, EpochSampler):
        sampler.set_epoch(epoch, start=start)
        # Workers take their base seed from this generator when they start: every epoch without
        # persistent workers, once (at the run's or the resume's first epoch) with them.
        if loader.generator is not None:
            # Each rank's workers get their own seeds (rank 0's are those of one process).
            loader.generator.manual_seed(epoch_seed(sampler.seed + 1, epoch) + sampler.rank)
    elif is_stream(loader):
        set_epoch = getattr(loader.dataset, "set_epoch", None)
        if callable(set_epoch):
            set_epoch(epoch)
        if loader.generator is not None:
            loader.generator.manual_seed(epoch_seed(seed + 1, epoch) + rank)  # each rank's workers their own
    elif hasattr(sampler, "set_epoch"):  # DistributedSampler and friends
        sampler.set_epoch(epoch)
