"""The pieces of distributed training that need no process group: sharding and the config."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import TensorDataset

from torchwise.data.loaders import EpochSampler, build_loader
from torchwise.errors import ConfigError
from torchwise.train.distributed import Distributed, shard_loader, start_distributed


def rank_batches(size: int, *, world: int, batch_size: int, epoch: int = 0, start: int = 0) -> list[list[list[int]]]:
    per_rank = []
    for rank in range(world):
        sampler = EpochSampler(size, seed=3, shuffle=True)
        sampler.shard(rank=rank, world=world, batch_size=batch_size)
        sampler.set_epoch(epoch, start=start)
        order = list(sampler)
        assert len(sampler) == len(order)
        per_rank.append([order[i:i + batch_size] for i in range(0, len(order), batch_size)])
    return per_rank


@pytest.mark.parametrize(("size", "start"), [(100, 0), (103, 0), (103, 32)])
def test_ranks_together_read_one_process_batches_at_world_times_the_batch(size, start):
    one = EpochSampler(size, seed=3, shuffle=True)
    one.set_epoch(0, start=start)
    order = list(one)
    global_batches = [order[i:i + 16] for i in range(0, len(order), 16)]
    ranks = rank_batches(size, world=2, batch_size=8, start=start)
    assert len(ranks[0]) == len(ranks[1]) == len(global_batches)  # every rank steps the same number of times
    for index, batch in enumerate(global_batches):
        together = ranks[0][index] + ranks[1][index]
        assert sorted(together) == sorted(batch)  # the same samples, none twice


def test_a_last_batch_smaller_than_the_world_is_refused_with_a_batch_size_hint():
    loader = build_loader(TensorDataset(torch.zeros(33, 2)), batch_size=8, shuffle=True, seed=0,
                          num_workers=0, pin_memory=False, persistent_workers=False)
    rank = Distributed(kind="ddp", rank=0, world=2, local_rank=0, backend="gloo", device=torch.device("cpu"),
                       timeout_s=60, owns_group=False)
    with pytest.raises(ConfigError) as err:
        shard_loader(rank, loader, what="training")
    assert err.value.message == ("the last batch of an epoch holds 1 samples, fewer than the 2 processes: "
                                 "a rank would have none")
    assert "train.batch_size (now 8)" in err.value.hint


def test_without_torchrun_training_is_a_plain_single_process(monkeypatch):
    from torchwise.config import RunConfig

    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(key, raising=False)
    assert start_distributed(RunConfig(train={"distributed": "ddp"})) is None
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert start_distributed(RunConfig()) is None  # auto with one process: nothing to synchronise


def test_a_backend_failure_in_forward_or_backward_names_the_rank_and_a_model_error_stays_the_models():
    from torchwise.errors import RunFailed
    from torchwise.train.distributed import grad_sync

    rank = Distributed(kind="ddp", rank=0, world=2, local_rank=0, backend="gloo", device=torch.device("cpu"),
                       timeout_s=5, owns_group=False)
    # What gloo raised in DDP's backward when the other rank hung (torch 2.13, CPU): a plain RuntimeError.
    gloo = ("[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting "
            "3000ms for recv operation to complete")
    with pytest.raises(RunFailed) as err, grad_sync(rank, torch.nn.Linear(1, 1), last=True):
        raise RuntimeError(gloo)
    assert err.value.message == f"rank 0/2: DDP's gradient all-reduce (backward) did not complete: {gloo}"
    assert err.value.hint.startswith("another rank failed or hung (collectives time out after 5 s, "
                                     "train.collective_timeout_s)")
    with pytest.raises(RunFailed), grad_sync(rank, torch.nn.Linear(1, 1), last=True):
        raise torch.distributed.DistBackendError("NCCL communicator was aborted")
    shapes = "mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)"
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2"), grad_sync(rank, torch.nn.Linear(1, 1), last=True):
        raise RuntimeError(shapes)


class Parts(torch.utils.data.IterableDataset):
    """Yields the (part, parts) each DataLoader worker of this process is given."""

    def __iter__(self):
        import torchwise

        yield torch.tensor(torchwise.stream_part())


def test_stream_part_numbers_every_worker_of_every_process(monkeypatch):
    monkeypatch.setenv("RANK", "1")  # torchrun's environment, inherited by the workers
    monkeypatch.setenv("WORLD_SIZE", "2")
    loader = torch.utils.data.DataLoader(Parts(), batch_size=None, num_workers=2)
    assert sorted(tuple(t.tolist()) for t in loader) == [(2, 4), (3, 4)]  # rank 1: parts 2 and 3 of 4
    monkeypatch.delenv("RANK")
    monkeypatch.delenv("WORLD_SIZE")
    assert [tuple(t.tolist()) for t in torch.utils.data.DataLoader(Parts(), batch_size=None)] == [(0, 1)]


def test_a_stream_is_its_own_shard_but_not_a_validation_stream_under_fsdp():
    stream = build_loader(Parts(), batch_size=1, shuffle=False, seed=0, num_workers=0, pin_memory=False,
                          persistent_workers=False)
    ddp = Distributed(kind="ddp", rank=1, world=2, local_rank=1, backend="gloo", device=torch.device("cpu"),
                      timeout_s=60, owns_group=False)
    shard_loader(ddp, stream, what="training")  # nothing to slice: the stream splits itself
    shard_loader(ddp, stream, what="validation")
    fsdp = Distributed(kind="fsdp", rank=1, world=2, local_rank=1, backend="gloo", device=torch.device("cpu"),
                       timeout_s=60, owns_group=False)
    shard_loader(fsdp, stream, what="training")
    with pytest.raises(ConfigError) as err:
        shard_loader(fsdp, stream, what="validation")
    assert err.value.message == "under FSDP the validation data cannot be a stream"
    assert "pass a Dataset for validation" in err.value.hint
