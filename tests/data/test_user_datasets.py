"""User data that a fast path must not skip: TensorDataset subclasses and batch types with `.to()`."""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch
from tests.helpers import quiet_config, tiny_classification
from torch.utils.data import DataLoader, TensorDataset

import torchwise
from torchwise.data.batch import count_samples, to_device
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


class GraphBatch:
    """A batch type of the user's own (the PyG/DGL pattern): it moves and pins itself."""

    calls: list[tuple[str, Any]] = []

    def __init__(self, x: torch.Tensor) -> None:
        self.x = x
        self.batch_size = len(x)

    def to(self, device: Any, non_blocking: bool = False) -> GraphBatch:
        GraphBatch.calls.append(("to", (torch.device(device), non_blocking)))
        return GraphBatch(self.x.to(device, non_blocking=non_blocking))

    def pin_memory(self) -> GraphBatch:
        GraphBatch.calls.append(("pin_memory", None))
        return self


class GraphModel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(6, 3)

    def forward(self, graph: GraphBatch) -> torch.Tensor:
        assert isinstance(graph, GraphBatch)
        return self.linear(graph.x)


def graph_collate(samples: list) -> tuple[GraphBatch, torch.Tensor]:
    return GraphBatch(torch.stack([x for x, _ in samples])), torch.stack([y for _, y in samples])


def test_a_batch_type_with_to_is_moved_by_its_own_to_and_counted_by_its_batch_size():
    GraphBatch.calls = []
    batch = (GraphBatch(torch.ones(5, 6)), torch.zeros(5))
    moved = to_device(batch, "cpu")
    assert GraphBatch.calls == [("to", (torch.device("cpu"), True))] and moved[0] is not batch[0]
    assert count_samples(batch[0]) == 5 and count_samples({"graph": batch[0]}) == 5


def test_fit_moves_each_batch_of_the_users_type_and_pinning_calls_its_pin_memory(tmp_path):
    GraphBatch.calls = []
    loader = DataLoader(tiny_classification(n=40), batch_size=8, collate_fn=graph_collate)
    result = torchwise.fit(GraphModel(), loader, runs_dir=tmp_path, quiet=True,
                           config=quiet_config(train={"epochs": 2}))
    assert result.summary["samples"] == 80
    moves = [args for name, args in GraphBatch.calls if name == "to"]
    assert moves == [(torch.device("cpu"), True)] * (1 + 2 * 5)  # the check's batch, then 5 per epoch
    GraphBatch.calls = []
    from torch.utils.data._utils.pin_memory import pin_memory  # what DataLoader(pin_memory=True) runs per batch

    pin_memory(graph_collate([tiny_classification()[0]])[0])  # (the CPU build cannot pin the tensor beside it)
    assert GraphBatch.calls == [("pin_memory", None)]
