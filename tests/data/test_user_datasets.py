"""User data that a fast path must not skip: TensorDataset subclasses and batch types with `.to()`."""

from __future__ import annotations

from collections import Counter

import torch
from tests.helpers import quiet_config, tiny_classification
from torch.utils.data import TensorDataset

import torchwise
from torchwise.data.loaders import BatchedTensors, build_loader, plain_tensors
from torchwise.data.split import split_dataset


class CountingTensors(TensorDataset):
    """Augments in __getitem__ (the pattern the fast path used to skip) and counts each call."""

    def __init__(self, *tensors: torch.Tensor) -> None:
        super().__init__(*tensors)
        self.calls: Counter[int] = Counter()

    def __getitem__(self, index: int) -> tuple[torch.Tensor, ...]:
        self.calls[int(index)] += 1
        x, y = super().__getitem__(index)
        return x + 0.01, y


def test_a_tensordataset_subclass_runs_its_getitem_for_every_sample_of_every_epoch(tmp_path):
    plain = tiny_classification(n=40)
    data = CountingTensors(*plain.tensors)
    torchwise.fit(torch.nn.Linear(6, 3), data, runs_dir=tmp_path, quiet=True,
                  config=quiet_config(train={"epochs": 5, "batch_size": 8}))
    # Every sample once per epoch; the only extra reads are the first two samples, read once when
    # the data is prepared and once by the pre-training check.
    assert {i: data.calls[i] - 5 for i in range(40)} == {i: 2 if i < 2 else 0 for i in range(40)}
    assert sum(data.calls.values()) == 5 * 40 + 4


def test_a_split_subclass_stays_itself_and_the_plain_tensordataset_keeps_batched_indexing():
    plain = tiny_classification(n=40)
    train, val = split_dataset(CountingTensors(*plain.tensors), val_fraction=0.25, seed=0)
    assert not plain_tensors(train) and isinstance(train.dataset, CountingTensors)  # a Subset of it
    loader = build_loader(CountingTensors(*plain.tensors), batch_size=8, shuffle=False, seed=0, num_workers=0,
                          pin_memory=False, persistent_workers=False)
    assert type(loader.dataset) is CountingTensors
    x, _ = next(iter(loader))
    assert torch.equal(x, plain.tensors[0][:8] + 0.01) and sum(loader.dataset.calls.values()) == 8
    fast = build_loader(plain, batch_size=8, shuffle=False, seed=0, num_workers=0, pin_memory=False,
                        persistent_workers=False)
    assert type(fast.dataset) is BatchedTensors
    train, _ = split_dataset(plain, val_fraction=0.25, seed=0)
    assert type(train) is TensorDataset
