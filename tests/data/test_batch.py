"""The batch contract: every structure a user's Dataset or collate_fn may return."""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from torchwise.data.batch import (
    call_model,
    chunk_batch,
    collate,
    count_samples,
    describe,
    output_logits,
    output_loss,
    slice_batch,
    split_batch,
    to_device,
)
from torchwise.errors import DataError

Pair = namedtuple("Pair", ["image", "label"])


@dataclass
class Sample:
    tokens: torch.Tensor
    text: str


def nested_batch(n: int = 6) -> dict:
    return {"inputs": (torch.arange(n * 2.0).reshape(n, 2), [torch.arange(n), {"deep": torch.ones(n, 3)}]),
            "ids": [f"s{i}" for i in range(n)], "scale": torch.tensor(2.0), "flag": None,
            "pair": Pair(torch.zeros(n, 1), torch.arange(n)), "sample": Sample(torch.ones(n, 4), "x")}


def test_to_device_keeps_structure_and_non_tensor_leaves():
    batch = nested_batch()
    moved = to_device(batch, torch.device("cpu"))
    assert moved.keys() == batch.keys()
    assert isinstance(moved["inputs"], tuple) and isinstance(moved["inputs"][1], list)
    assert torch.equal(moved["inputs"][1][1]["deep"], torch.ones(6, 3))
    assert moved["ids"] == batch["ids"] and moved["flag"] is None
    assert isinstance(moved["pair"], Pair) and isinstance(moved["sample"], Sample) and moved["sample"].text == "x"


def test_to_device_moves_non_blocking_every_tensor(monkeypatch):
    calls = []
    real_to = torch.Tensor.to

    def spy(self, *args, **kwargs):
        calls.append(kwargs.get("non_blocking"))
        return real_to(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", spy)
    to_device(nested_batch(), "cpu")
    to_device((torch.ones(2), torch.ones(2)), "cpu")  # the fast path
    assert calls == [True] * 9  # 7 tensors in the nested batch, 2 in the pair


def test_float64_converted_only_when_asked():
    batch = {"x": torch.ones(2, dtype=torch.float64), "y": torch.ones(2, dtype=torch.int64)}
    assert to_device(batch, "cpu")["x"].dtype == torch.float64
    moved = to_device(batch, "cpu", float64_to=torch.float32)
    assert moved["x"].dtype == torch.float32 and moved["y"].dtype == torch.int64


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_pinned_batch_to_cuda_is_equal():
    batch = {"x": torch.randn(8, 3).pin_memory(), "y": (torch.arange(8).pin_memory(),)}
    moved = to_device(batch, "cuda")
    torch.cuda.synchronize()
    assert moved["x"].is_cuda and torch.equal(moved["x"].cpu(), batch["x"])
    assert torch.equal(moved["y"][0].cpu(), batch["y"][0])


def test_count_samples_is_the_leading_dim_of_the_first_tensor():
    assert count_samples(nested_batch(5)) == 5
    # a language-model batch counts sequences, not tokens
    assert count_samples({"input_ids": torch.zeros(4, 128, dtype=torch.long)}) == 4
    assert count_samples((torch.tensor(3.0), torch.zeros(7, 2))) == 7  # a 0-dim leaf has no batch dim
    assert count_samples({"text": ["a", "b", "c"]}) == 3
    with pytest.raises(DataError, match="holds no tensor with a batch dimension") as info:
        count_samples({"n": 3})
    assert "{'n': int}" in info.value.message


def test_split_batch_follows_the_calling_convention():
    x, y = torch.ones(3, 2), torch.arange(3)
    assert split_batch((x, y)) == (x, y)
    assert split_batch([x, y])[1] is y
    inputs, target = split_batch(((x, x), y))
    assert isinstance(inputs, tuple) and target is y
    hf = {"input_ids": x, "labels": y}
    assert split_batch(hf)[0] is hf and split_batch(hf)[1] is y
    assert split_batch({"input_ids": x})[1] is None
    assert split_batch(x) == (x, None)
    assert split_batch(Pair(x, y)) == (x, y)
    with pytest.raises(DataError, match="this one has 3 items") as info:
        split_batch((x, x, y))
    assert "return ((x1, x2), y)" in info.value.hint


def test_call_model_star_and_double_star():
    def forward(image, meta=None):
        return image.sum() + (0 if meta is None else meta.sum() * 10)

    image, meta = torch.ones(2, 2), torch.ones(2)
    assert call_model(forward, image) == 4
    assert call_model(forward, (image, meta)) == 24
    assert call_model(forward, [image, meta]) == 24
    assert call_model(forward, {"meta": meta, "image": image}) == 24


class ModelOutput(OrderedDict):
    """Shaped like transformers' ModelOutput: a dict whose keys are also attributes."""

    def __getattr__(self, name):
        return self[name]


def test_output_loss_and_logits_from_objects_dicts_and_tensors():
    @dataclass
    class Out:
        loss: torch.Tensor | None
        logits: torch.Tensor

    loss, logits = torch.tensor(0.5), torch.ones(2, 3)
    for output in (Out(loss, logits), {"loss": loss, "logits": logits}, ModelOutput(loss=loss, logits=logits)):
        assert output_loss(output) is loss and output_logits(output) is logits
    assert output_loss(Out(None, logits)) is None
    assert output_loss(logits) is None and output_logits(logits) is logits
    assert output_logits({"loss": loss}) == {"loss": loss}  # no logits: the output as it is


def test_slice_and_chunk_cut_every_tensor_and_column_along_dim_0():
    batch = nested_batch(5)
    part = slice_batch(batch, 1, 3)
    assert torch.equal(part["inputs"][0], batch["inputs"][0][1:3])
    assert torch.equal(part["inputs"][1][1]["deep"], torch.ones(2, 3))
    assert part["ids"] == ["s1", "s2"] and part["flag"] is None
    assert torch.equal(part["scale"], torch.tensor(2.0))  # a 0-dim leaf is shared
    assert torch.equal(part["pair"].label, torch.tensor([1, 2])) and part["sample"].text == "x"
    pieces = chunk_batch(batch, 2)
    assert [count_samples(p) for p in pieces] == [3, 2]
    assert torch.equal(torch.cat([p["inputs"][1][0] for p in pieces]), torch.arange(5))
    assert [count_samples(p) for p in chunk_batch((torch.zeros(2), torch.zeros(2)), 4)] == [1, 1]


def test_describe_names_structure_shapes_and_dtypes():
    text = describe(((torch.zeros(8, 3, 32, 32), torch.zeros(8, 5, dtype=torch.float64)), torch.zeros(8).long()))
    assert text == "((Tensor[8, 3, 32, 32] float32, Tensor[8, 5] float64), Tensor[8] int64)"
    assert describe(Pair(np.zeros((2, 3)), 1)) == "Pair(image=ndarray[2, 3] float64, label=int)"
    assert describe({f"k{i}": torch.zeros(1) for i in range(20)}, limit=40).endswith("...")


def test_collate_walks_dicts_tuples_dataclasses_and_arrays():
    samples = [{"inputs": (np.ones(3), torch.tensor([i])), "label": i, "s": Sample(torch.ones(2), f"t{i}")}
               for i in range(4)]
    batch = collate(samples)
    assert batch["inputs"][0].shape == (4, 3) and batch["inputs"][0].dtype == torch.float64
    assert torch.equal(batch["label"], torch.arange(4))
    assert isinstance(batch["s"], Sample) and batch["s"].tokens.shape == (4, 2) and batch["s"].text == [
        "t0", "t1", "t2", "t3"]
    pairs = collate([(np.zeros(2), 1), (np.ones(2), 0)])  # a plain list of (ndarray, int)
    assert torch.equal(pairs[1], torch.tensor([1, 0])) and count_samples(pairs) == 2


def test_collate_names_the_key_where_samples_differ():
    samples = [{"input_ids": torch.zeros(5), "labels": 0}, {"input_ids": torch.zeros(7), "labels": 1}]
    with pytest.raises(DataError, match=r"at sample\['input_ids'\]: they hold Tensor\[5\] float32, "
                                        r"Tensor\[7\] float32") as info:
        collate(samples)
    assert "pad_sequence" in info.value.hint
    with pytest.raises(DataError, match=r"sample 1 has keys \['x'\], the first sample has \['input_ids'\]"):
        collate([{"input_ids": torch.zeros(2)}, {"x": torch.zeros(2)}])
    with pytest.raises(DataError, match=r"sample\[0\]: object is not a tensor"):
        collate([(object(), 1), (object(), 2)])
