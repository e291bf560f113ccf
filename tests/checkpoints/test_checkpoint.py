from __future__ import annotations

import json
import math
import pickle
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors import safe_open

from torchwise.checkpoints import meta_file
from torchwise.checkpoints.checkpoint import (
    check_compatible,
    find_checkpoint,
    load_checkpoint,
    save_checkpoint,
    verify_checkpoint,
)
from torchwise.checkpoints.state_codec import flatten_state, unflatten_state
from torchwise.checkpoints.tensor_file import tensor_bytes
from torchwise.errors import CheckpointError


def assert_same(a: Any, b: Any, path: str = "state") -> None:
    """Equal in type and value, bit for bit (nan == nan, -0.0 != 0.0)."""
    assert type(a) is type(b), f"{path}: {type(a)} vs {type(b)}"
    if isinstance(a, torch.Tensor):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), path
        assert bytes(tensor_bytes(a)) == bytes(tensor_bytes(b)), path
    elif isinstance(a, (np.ndarray, np.generic)):
        assert (a.dtype, a.shape, a.tobytes()) == (b.dtype, b.shape, b.tobytes()), path
    elif isinstance(a, float):
        assert math.copysign(1, a) == math.copysign(1, b) and (a == b or (a != a and b != b)), path
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        assert [type(k) for k in a] == [type(k) for k in b], path
        for key in a:
            assert_same(a[key], b[key], f"{path}[{key!r}]")
    else:
        assert a == b, path


def round_trip(obj: Any) -> Any:
    tensors, skeleton = flatten_state(obj)
    # through JSON text, as on disk
    return unflatten_state(dict(tensors), json.loads(json.dumps(skeleton, allow_nan=False)))


def every_kind() -> dict[Any, Any]:
    base = torch.arange(12.0).reshape(3, 4)
    shared = torch.randn(5)
    return {
        "ints": [0, -1, 2**63, 2**64, -(2**64), 10**40],
        "floats": (0.0, -0.0, 1e-308, math.inf, -math.inf, math.nan, -math.nan, 0.1),
        "scalars": [True, False, None, "", "ü$.[0]"],
        0: "int key",
        7: {"$looks_like_a_tag": 1, "a.b": 2},
        "tensors": {
            "zero_dim": torch.tensor(3.5),
            "bool": torch.tensor([True, False]),
            "uint8": torch.arange(256, dtype=torch.uint8),
            "bfloat16": torch.randn(4).to(torch.bfloat16),
            "float16": torch.randn(2, 2).half(),
            "int64": torch.tensor([2**62, -5]),
            "uint32": torch.tensor([1, 2**32 - 1], dtype=torch.uint32),
            "empty": torch.zeros(0, 3),
            "non_contiguous": base.t(),
            "row_view": base[1],
            "nan": torch.tensor([math.nan, -0.0, math.inf]),
        },
        "same_twice": [shared, shared],
        "numpy": (np.arange(6, dtype=np.uint32).reshape(2, 3), np.array(2.5), np.zeros(0, ">i2")),
        "numpy_scalars": [
            np.float64(1.5),
            np.int64(-3),
            np.bool_(True),
            np.uint32(7),
            np.float32("nan"),
        ],
        "nested": [[], (), {}, [{"x": ((1,),)}]],
    }


def test_every_kind_round_trips_exactly_through_disk(tmp_path: Path) -> None:
    state = every_kind()
    save_checkpoint(tmp_path / "last", model_state={}, training_state=state, meta={})
    back = load_checkpoint(tmp_path / "last").training_state
    assert_same(state, back)
    assert back["same_twice"][0] is back["same_twice"][1]
    assert back["tensors"]["non_contiguous"].is_contiguous()


json_leaves = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
tensor_leaves = st.builds(
    lambda shape, dtype: (torch.rand(shape) * 100).to(dtype),
    st.lists(st.integers(0, 3), max_size=3),
    st.sampled_from([torch.float32, torch.int64, torch.bool, torch.bfloat16, torch.uint8]),
)
array_leaves = st.builds(
    lambda n, dtype: (np.random.default_rng(n).random(n) * 100).astype(dtype),
    st.integers(0, 5),
    st.sampled_from(["<u4", "<f8", ">i8", "?"]),
)
states = st.recursive(
    json_leaves | tensor_leaves | array_leaves,
    lambda children: (
        st.lists(children, max_size=3)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=4) | st.integers(), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(states)
def test_any_nested_state_round_trips_exactly(state: Any) -> None:
    assert_same(state, round_trip(state))


@pytest.mark.parametrize(
    ("state", "path"),
    [
        ({"a": [1, object()]}, "state.a[1]"),
        ({(1, 2): 3}, "state"),
        ({"x": {1.5: 0}}, "state.x"),
        ({"p": torch.nn.Parameter(torch.ones(1))}, "state.p"),
        ({"s": {1, 2}}, "state.s"),
        ({"b": b"bytes"}, "state.b"),
    ],
)
def test_unsupported_values_are_named_by_path(state: Any, path: str) -> None:
    with pytest.raises(CheckpointError) as error:
        flatten_state(state)
    assert f"{path} " in error.value.message
    assert error.value.hint


def test_lambda_lr_with_a_callable_object_names_the_lambda() -> None:
    class Warmup:
        def __init__(self) -> None:
            self.curve = lambda step: min(1.0, step / 10)

        def __call__(self, step: int) -> float:
            return self.curve(step)

    optimizer = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, Warmup())
    with pytest.raises(CheckpointError, match=r"state\.scheduler\.lr_lambdas\[0\]\.curve "):
        flatten_state({"scheduler": scheduler.state_dict()})


def draws() -> tuple[float, float, torch.Tensor]:
    return random.random(), float(np.random.rand()), torch.rand(3)


def rng_state() -> dict[str, Any]:
    return {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
        "cuda": [],
    }


def test_rng_states_restored_from_a_checkpoint_reproduce_the_draws(tmp_path: Path) -> None:
    random.seed(1), np.random.seed(2), torch.manual_seed(3)
    draws()
    save_checkpoint(tmp_path / "last", model_state={}, training_state={"rng": rng_state()}, meta={})
    expected = draws()
    draws()  # move every generator on
    rng = load_checkpoint(tmp_path / "last").training_state["rng"]
    assert type(rng["python"]) is tuple and rng["numpy"][1].dtype == np.uint32
    random.setstate(rng["python"])
    np.random.set_state(rng["numpy"])
    torch.set_rng_state(rng["torch"])
    again = draws()
    assert again[:2] == expected[:2]
    assert torch.equal(again[2], expected[2])


class TinyNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Dropout(0.2)
        )
        self.head = torch.nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def make_sgd_onecycle(model: torch.nn.Module) -> tuple[Any, Any]:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return optimizer, torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=20)


def make_adam_lambda(model: torch.nn.Module) -> tuple[Any, Any]:
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 0.9**step)


def make_adamw_groups_sequential(model: Any) -> tuple[Any, Any]:
    groups = [{"params": model.body.parameters()}, {"params": model.head.parameters(), "lr": 3e-3}]
    optimizer = torch.optim.AdamW(groups, lr=1e-2, weight_decay=0.1)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=3)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
    return optimizer, torch.optim.lr_scheduler.SequentialLR(
        optimizer, [warmup, cosine], milestones=[3]
    )


def make_adam_cosine(model: torch.nn.Module) -> tuple[Any, Any]:
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, amsgrad=True)
    return optimizer, torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=7)


def train(model: Any, optimizer: Any, scheduler: Any, scaler: Any, steps: int) -> None:
    for _ in range(steps):
        x = torch.randn(16, 4)  # data and dropout both draw from the torch RNG
        loss = torch.nn.functional.cross_entropy(model(x), (x.sum(1) > 0).long())
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()


def everything(seed: int, make: Any) -> tuple[Any, Any, Any, Any]:
    torch.manual_seed(seed)
    model = TinyNet()
    optimizer, scheduler = make(model)
    return model, optimizer, scheduler, torch.amp.GradScaler("cpu", growth_interval=3)


@pytest.mark.parametrize(
    "make", [make_sgd_onecycle, make_adam_lambda, make_adamw_groups_sequential, make_adam_cosine]
)
def test_training_continues_identically_after_save_and_load(tmp_path: Path, make: Any) -> None:
    model, optimizer, scheduler, scaler = everything(0, make)
    train(model, optimizer, scheduler, scaler, 5)
    state = {
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "scaler": scaler.state_dict(),
        "rng": rng_state(),
        "step": 5,
    }
    save_checkpoint(
        tmp_path / "last",
        model_state=model.state_dict(),
        training_state=state,
        meta={"config_hash": "h"},
    )
    train(model, optimizer, scheduler, scaler, 5)

    resumed, optimizer2, scheduler2, scaler2 = everything(1, make)
    loaded = load_checkpoint(tmp_path / "last")
    check_compatible(loaded, resumed)
    resumed.load_state_dict(loaded.model_state)
    optimizer2.load_state_dict(loaded.training_state["optimizer"])
    scheduler2.load_state_dict(loaded.training_state["scheduler"])
    scaler2.load_state_dict(loaded.training_state["scaler"])
    torch.set_rng_state(loaded.training_state["rng"]["torch"])
    train(resumed, optimizer2, scheduler2, scaler2, 5)

    for (name, expected), actual in zip(
        model.state_dict().items(), resumed.state_dict().values(), strict=True
    ):
        assert torch.equal(expected, actual), name
    assert scheduler.get_last_lr() == scheduler2.get_last_lr()
    assert scaler.state_dict() == scaler2.state_dict()
    assert_same(optimizer.state_dict(), optimizer2.state_dict())


class TiedLM(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)
        self.out = torch.nn.Linear(4, 10, bias=False)
        self.out.weight = self.embed.weight


def test_tied_weights_are_stored_once_and_stay_tied(tmp_path: Path) -> None:
    model = TiedLM()
    save_checkpoint(tmp_path / "last", model_state=model.state_dict(), training_state={}, meta={})
    loaded = load_checkpoint(tmp_path / "last")
    with safe_open(loaded.path / "model.safetensors", "pt") as file:
        assert list(file.keys()) == ["embed.weight"]
    assert loaded.model_state["out.weight"] is loaded.model_state["embed.weight"]
    fresh = TiedLM()
    fresh.load_state_dict(loaded.model_state)
    assert fresh.out.weight is fresh.embed.weight
    assert torch.equal(fresh.embed.weight, model.embed.weight)


def test_a_checkpoint_of_another_model_is_rejected_by_name(tmp_path: Path) -> None:
    save_checkpoint(
        tmp_path / "last", model_state=TinyNet().state_dict(), training_state={}, meta={}
    )
    other = torch.nn.Sequential(torch.nn.Linear(4, 8))
    wider = TinyNet()
    wider.head = torch.nn.Linear(8, 3)
    loaded = load_checkpoint(tmp_path / "last")
    with pytest.raises(CheckpointError, match=r"missing keys \(2\): \['0.weight', '0.bias'\]"):
        check_compatible(loaded, other)
    with pytest.raises(CheckpointError, match=r"head.weight: file \[2, 8\] vs model \[3, 8\]"):
        check_compatible(loaded, wider)


def test_layout_meta_and_no_pickle_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("pickle used")

    for name in ("dump", "dumps", "load", "loads", "Pickler", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    model = TinyNet()
    save_checkpoint(
        tmp_path / "last",
        model_state=model.state_dict(),
        training_state={"rng": rng_state()},
        meta={"config_hash": "c0ffee", "step": 3},
    )
    loaded = load_checkpoint(tmp_path / "last")
    assert (tmp_path / "last").is_symlink()
    assert sorted(p.name for p in loaded.path.iterdir()) == [
        "meta.json",
        "model.safetensors",
        "state.safetensors",
    ]
    meta = json.loads((loaded.path / "meta.json").read_text())
    assert meta["format_version"] == 1 and meta["config_hash"] == "c0ffee"
    assert set(meta["files"]) == {"model.safetensors", "state.safetensors"}
    assert loaded.meta["torch_version"] == torch.__version__ and loaded.meta["step"] == 3


def test_newer_format_asks_for_an_upgrade(tmp_path: Path) -> None:
    save_checkpoint(tmp_path / "last", model_state={}, training_state={}, meta={})
    meta_path = find_checkpoint(tmp_path / "last") / "meta.json"
    document = meta_file.read_meta_file(meta_path)
    meta_file.write_meta(meta_path, {**document, "format_version": 2})
    with pytest.raises(CheckpointError, match="format 2") as error:
        verify_checkpoint(tmp_path / "last")
    assert "upgrade torchwise" in error.value.hint


def test_map_location_places_weights_and_keeps_state_on_cpu(tmp_path: Path) -> None:
    save_checkpoint(
        tmp_path / "last",
        model_state={"w": torch.ones(2)},
        training_state={"t": torch.ones(1)},
        meta={},
    )
    loaded = load_checkpoint(tmp_path / "last", map_location=torch.device("cpu"))
    assert loaded.model_state["w"].device.type == "cpu"
    assert loaded.training_state["t"].device.type == "cpu"


def test_bad_arguments_are_checkpoint_errors(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="reserved keys"):
        save_checkpoint(tmp_path / "a", model_state={}, training_state={}, meta={"files": 1})
    with pytest.raises(CheckpointError, match="not plain JSON"):
        save_checkpoint(tmp_path / "a", model_state={}, training_state={}, meta={"x": math.nan})
    with pytest.raises(CheckpointError, match="not a tensor"):
        save_checkpoint(tmp_path / "a", model_state={"w": [1.0]}, training_state={}, meta={})
    with pytest.raises(CheckpointError, match="there is no checkpoint"):
        load_checkpoint(tmp_path / "a")
    assert list(tmp_path.iterdir()) == []


def test_writing_to_loaded_tensors_never_changes_the_checkpoint(tmp_path: Path) -> None:
    save_checkpoint(
        tmp_path / "last",
        model_state={"w": torch.ones(1000)},
        training_state={"exp_avg": torch.zeros(1000)},
        meta={},
    )
    loaded = load_checkpoint(tmp_path / "last")
    loaded.training_state["exp_avg"].add_(1.0)  # as an optimizer step on resumed state does
    loaded.model_state["w"].mul_(3.0)
    verify_checkpoint(tmp_path / "last")
    again = load_checkpoint(tmp_path / "last")
    assert torch.equal(again.training_state["exp_avg"], torch.zeros(1000))
    assert torch.equal(again.model_state["w"], torch.ones(1000))
