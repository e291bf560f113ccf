"""Training from a stream: an IterableDataset trains by epochs or by max_steps, shards across
workers, and resumes mid-stream exactly when it can say where it is."""

from __future__ import annotations

import math
import os
import signal

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from torch import nn
from torch.utils.data import IterableDataset, get_worker_info

import torchwise
from torchwise.errors import ConfigError
from torchwise.runs.folder import read_jsonl

DATA = tiny_classification(n=60)  # x: [60, 6], y: 3 classes; a stream yields its rows in order


class Rows(IterableDataset):
    """A generator over DATA's rows, optionally split across DataLoader workers."""

    def __init__(self, *, shard: bool = True) -> None:
        self.shard = shard

    def rows(self):
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info and self.shard else (0, 1)
        return range(worker, len(DATA), workers)

    def __iter__(self):
        return (DATA[i] for i in self.rows())


class StatefulRows(Rows):
    """The same stream, able to say where it is (torchdata's Stateful protocol)."""

    def __init__(self) -> None:
        super().__init__()
        self.position = 0

    def __iter__(self):
        start, self.position = self.position, 0
        for i in self.rows():
            if i >= start:
                self.position = i + 1
                yield DATA[i]
        self.position = 0

    def state_dict(self) -> dict:
        return {"position": self.position}

    def load_state_dict(self, state: dict) -> None:
        self.position = state["position"]


class Net(nn.Module):
    """Dropout draws from the global RNG (a resume that loses RNG state shows); it records the
    rows it trains on (column 0 identifies a row) and can send itself a real Ctrl-C."""

    def __init__(self, interrupt_after_forward: int | None = None) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 3))
        self.interrupt_after_forward = interrupt_after_forward
        self.seen: list[float] = []
        self.forwards = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Training steps only: the pre-training check's train-mode forward runs without gradients.
        if self.training and torch.is_grad_enabled():
            self.seen.extend(x[:, 0].tolist())
            self.forwards += 1
            if self.forwards == self.interrupt_after_forward:
                os.kill(os.getpid(), signal.SIGINT)
        return self.body(x)


def config(**train) -> dict:
    return quiet_config(train={"batch_size": 10, "epochs": 2, **train}, data={"shuffle": False},
                        schedule={"name": "constant"}, optim={"lr": 0.01})


def train_records(run_dir, key: str) -> list[float]:
    return [r[key] for r in read_jsonl(run_dir / "metrics.jsonl") if r["split"] == "train"]


def test_a_stream_trains_by_epochs_exactly_as_the_same_rows_in_order(tmp_path):
    streamed = torchwise.fit(Net(), Rows(), config=config(epochs=3), runs_dir=tmp_path)
    mapped = torchwise.fit(Net(), DATA, config=config(epochs=3), runs_dir=tmp_path)
    losses = train_records(streamed.run_dir, "loss")
    assert streamed.status == "completed" and streamed.summary["steps"] == 18  # 3 passes of 6 batches
    assert losses == train_records(mapped.run_dir, "loss")  # the same rows in the same order, bit for bit
    assert sum(losses[-6:]) < 0.8 * sum(losses[:6])  # and it learns


def test_max_steps_makes_a_stream_step_based_with_the_map_style_schedule(tmp_path):
    cfg = quiet_config(train={"batch_size": 10, "epochs": 1, "max_steps": 15}, data={"shuffle": False},
                       schedule={"name": "warmup-cosine", "warmup_steps": 3})
    streamed = torchwise.fit(Net(), Rows(), config=cfg, runs_dir=tmp_path)
    # max_steps overrides epochs for a stream: 15 steps are two whole passes and half of a third
    assert streamed.summary["steps"] == 15 and streamed.summary["epochs"] == 2
    cfg["train"]["epochs"] = None
    mapped = torchwise.fit(Net(), DATA, config=cfg, runs_dir=tmp_path)
    lrs = train_records(streamed.run_dir, "lr")
    assert lrs == train_records(mapped.run_dir, "lr") and len(lrs) == 15
    assert lrs[:3] == pytest.approx([1e-3 / 3, 2e-3 / 3, 1e-3])  # warm-up, then cosine over 15 steps
    assert lrs[-1] == pytest.approx(1e-3 * 0.5 * (1 + math.cos(math.pi * 11 / 12)))


def test_a_spanning_schedule_over_a_stream_of_unknown_length_needs_max_steps(tmp_path):
    cfg = quiet_config(train={"batch_size": 10, "epochs": 2})  # warmup-cosine by default
    with pytest.raises(ConfigError) as caught:
        torchwise.fit(Net(), Rows(), config=cfg, runs_dir=tmp_path)
    assert "stream of unknown length" in caught.value.message
    assert "train.max_steps" in caught.value.hint


def test_validation_from_a_stream(tmp_path):
    model = Net()
    result = torchwise.fit(model, Rows(), Rows(), config=config(epochs=2), runs_dir=tmp_path)
    val = [r for r in read_jsonl(result.run_dir / "metrics.jsonl") if r["split"] == "val"]
    model.eval()
    with torch.no_grad():
        logits = model(DATA.tensors[0])
    # the whole stream evaluated: loss and accuracy over its 60 rows, as computed by hand
    assert len(val) == 2
    assert val[-1]["loss"] == pytest.approx(nn.functional.cross_entropy(logits, DATA.tensors[1]).item(), rel=1e-5)
    assert val[-1]["accuracy"] == pytest.approx((logits.argmax(1) == DATA.tensors[1]).float().mean().item())


def test_two_sharding_workers_see_every_row_once_per_epoch(tmp_path):
    model = Net()
    cfg = quiet_config(train={"batch_size": 10, "epochs": 2}, data={"num_workers": 2},
                       schedule={"name": "constant"})
    result = torchwise.fit(model, Rows(), config=cfg, runs_dir=tmp_path)
    rows = sorted(DATA.tensors[0][:, 0].tolist())
    assert sorted(model.seen[:60]) == rows and sorted(model.seen[60:]) == rows
    assert not [e for e in read_jsonl(result.run_dir / "events.jsonl") if e["event"] == "stream_not_sharded"]


def test_a_stream_that_forgets_to_shard_is_warned_about(tmp_path, capsys):
    cfg = quiet_config(train={"batch_size": 10, "epochs": 1}, data={"num_workers": 2},
                       schedule={"name": "constant"}, log={"progress": "plain"})
    result = torchwise.fit(Net(), Rows(shard=False), config=cfg, runs_dir=tmp_path)
    events = [e for e in read_jsonl(result.run_dir / "events.jsonl") if e["event"] == "stream_not_sharded"]
    assert events == [events[0]] and events[0]["num_workers"] == 2
    assert "get_worker_info()" in capsys.readouterr().out
    assert result.summary["samples"] == 120  # every row twice: what the warning is about


def interrupted_then_resumed(tmp_path, make_stream, *, stop_after: int, workers: int = 0):
    cfg = quiet_config(train={"batch_size": 10, "epochs": 2}, data={"num_workers": workers},
                       schedule={"name": "constant"}, checkpoint={"enabled": True})
    reference = Net()
    ref = torchwise.fit(reference, make_stream(), config=cfg, runs_dir=tmp_path / "ref")
    first = torchwise.fit(Net(interrupt_after_forward=stop_after), make_stream(), config=cfg,
                          runs_dir=tmp_path / "stopped")
    assert first.status == "interrupted" and first.summary["steps"] == stop_after
    model = Net()
    resumed = torchwise.fit(model, make_stream(), resume=first.run_dir)
    assert resumed.status == "completed"
    return reference, ref, model, resumed


@pytest.mark.parametrize("workers", [0, 2])
def test_a_stateful_stream_resumes_mid_epoch_bit_equal(tmp_path, workers):
    pytest.importorskip("torchdata")
    reference, ref, model, resumed = interrupted_then_resumed(tmp_path, StatefulRows, stop_after=4,
                                                              workers=workers)
    assert resumed.summary["steps"] == 12
    resumed_losses = {r["step"]: r["loss"] for r in read_jsonl(resumed.run_dir / "metrics.jsonl")
                      if r["split"] == "train"}
    assert resumed_losses == {r["step"]: r["loss"] for r in read_jsonl(ref.run_dir / "metrics.jsonl")
                              if r["split"] == "train"}
    for key, value in reference.state_dict().items():
        assert torch.equal(model.state_dict()[key], value), key
    events = [e["event"] for e in read_jsonl(resumed.run_dir / "events.jsonl")]
    assert "resume" in events and "epoch_restarted" not in events


def test_a_plain_stream_restarts_its_epoch_with_a_warning_event(tmp_path):
    _, _, model, resumed = interrupted_then_resumed(tmp_path, Rows, stop_after=4)
    restarted = [e for e in read_jsonl(resumed.run_dir / "events.jsonl") if e["event"] == "epoch_restarted"]
    assert restarted and restarted[0]["samples_skipped"] == 40 and "state_dict()" in restarted[0]["hint"]
    # the first epoch is read again from its start: 4 batches before the stop, 6 + 6 after
    assert resumed.summary["steps"] == 16 and len(model.seen) == 120


def test_a_user_dataloader_over_a_stream_trains(tmp_path):
    from torch.utils.data import DataLoader

    streamed = torchwise.fit(Net(), DataLoader(Rows(), batch_size=10), config=config(), runs_dir=tmp_path)
    mapped = torchwise.fit(Net(), DataLoader(DATA, batch_size=10), config=config(), runs_dir=tmp_path)
    assert streamed.summary["steps"] == 12
    assert train_records(streamed.run_dir, "loss") == train_records(mapped.run_dir, "loss")


def test_tune_and_profile_take_a_stream(tmp_path):
    """They need a batch, not a length: the stream is read from its start as far as they need."""
    import torchwise.tune as tune

    cfg = {"train": {"batch_size": 10, "max_steps": 30}}
    lr = tune.lr_range_test(Net(), Rows(), config=cfg, num_steps=12, batch_size=10)
    assert len(lr.lrs) == len(lr.losses) <= 12 and lr.suggested_lr > 0
    memory = tune.estimate_memory(Net(), Rows(), config=cfg, batch_size=8, bf16=False)
    assert memory.predicted_peak_bytes > memory.parameters > 0
    found = tune.find_batch_size(Net(), Rows(), config=cfg, budget="64MiB", limit=40)
    assert found.batch_size == 40  # the stream wraps around: a batch larger than the 60 rows would too
    profiled = tune.profile_steps(Net(), Rows(), config=cfg, steps=4, batch_size=10)
    assert profiled.verdict
