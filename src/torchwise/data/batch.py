"""What a batch is: the one place that walks a batch's structure.

Samples and batches may be tensors, tuples, lists, dicts, dataclasses and named tuples nested
to any depth, with non-tensor leaves (strings, ids, None) carried along untouched. The loop,
preflight, evaluation, the out-of-memory split, tune, summary and export all ask this module;
none of them unpacks a batch by hand.

The calling convention (kept small on purpose)::

    batch                         model call          torchwise's loss / metrics see
    (inputs, target)  tensor      model(inputs)       loss(output, target)
    (inputs, target)  tuple/list  model(*inputs)      loss(output, target)
    (inputs, target)  dict        model(**inputs)     loss(output, target)
    dict (no separate target)     model(**batch)      target = batch["labels"] (else batch["targets"])
    tensor (no target)            model(batch)        the model must return its own loss

A tuple or list of two is always ``(inputs, target)``; other lengths are an error (nest the
inputs: ``((image, meta), label)``). When the output has a ``loss`` (attribute or key) that is
the loss; ``logits`` (attribute or key), or the output itself when it is a tensor, is what the
metrics see; an output that is a dict of scalar losses only (a detection model in train mode)
has their sum as its loss. The sample count of a batch is the length of its per-sample lists
(images of different sizes, target dicts) where it has one, else the leading dimension of its
first tensor (sequences, not tokens; never an image's channels).

Samples whose tensors differ in shape are kept as a `SampleList`, one entry per sample, where
that is what a model takes: images of different sizes, and target dicts (those holding
``boxes``, or 2-d+ tensors of different shapes), as torchvision's detection models take them.
Rows of different lengths (token ids) need padding and are refused with the key named. An
object of the user's own with a ``.to(device, non_blocking=...)`` method (a graph batch) is
moved with it.

>>> import torch
>>> batch = ({"ids": torch.zeros(4, 7, dtype=torch.long), "mask": torch.ones(4, 7)}, torch.arange(4))
>>> count_samples(batch), describe(batch)
(4, "({'ids': Tensor[4, 7] int64, 'mask': Tensor[4, 7] float32}, Tensor[4] int64)")
>>> inputs, target = split_batch(batch)
>>> [count_samples(piece) for piece in chunk_batch(batch, 3)]
[2, 2]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch.utils.data import default_collate  # torch imports torch.utils.data itself

from torchwise.errors import DataError

#: A key of a dict batch that holds the target for torchwise's loss and metrics (the HF name).
TARGET_KEY = "labels"
#: Where a dict batch without ``labels`` holds it: a detection model's ``forward(images, targets)``.
DETECTION_TARGET_KEY = "targets"

#: A key that marks a dict nested in a sample as one image's targets (torchvision's detection
#: format): such dicts are kept one per sample, never stacked.
DETECTION_KEY = "boxes"

# Leaves that a batch may carry besides tensors (ids, texts, flags); kept as they are.
_PLAIN = (str, bytes, int, float, bool, type(None))


class SampleList(list):
    """A batch position kept as one entry per sample (their shapes differ, so they do not stack)."""


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _is_dataclass(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _is_column(value: Any) -> bool:
    """A list of plain values (one string or id per sample, as collation leaves them)."""
    return isinstance(value, list) and len(value) > 0 and all(isinstance(v, _PLAIN) for v in value)


def _per_sample(value: Any) -> bool:
    """One entry per sample: a `SampleList`, or a list or tuple of dicts (target dicts as a
    torchvision-style ``collate_fn=lambda b: tuple(zip(*b))`` leaves them)."""
    if isinstance(value, SampleList):
        return True
    return (isinstance(value, (tuple, list)) and not _is_namedtuple(value) and len(value) > 0
            and all(isinstance(v, Mapping) for v in value))


def _movable(value: Any) -> bool:
    """An object of the user's own that moves itself (PyG's Batch, DGL graphs): it has ``.to``."""
    return not isinstance(value, (torch.Tensor, Mapping, tuple, list, type)) and callable(getattr(value, "to", None))


def map_tensors(batch: Any, fn: Callable[[torch.Tensor], Any], *,
                column: Callable[[list], Any] | None = None, movable: Callable[[Any], Any] | None = None) -> Any:
    """The same structure with ``fn`` applied to every tensor, ``column`` to plain-value lists and
    per-sample lists, and ``movable`` to objects of the user's own that have a ``.to`` method.

    >>> map_tensors({"a": [torch.ones(2)], "n": "x"}, lambda t: t * 3)
    {'a': [tensor([3., 3.])], 'n': 'x'}
    """
    if isinstance(batch, torch.Tensor):
        return fn(batch)
    if column is not None and (_is_column(batch) or _per_sample(batch)):
        return column(batch)

    def inner(value: Any) -> Any:
        return map_tensors(value, fn, column=column, movable=movable)

    if isinstance(batch, Mapping):
        return _same_mapping(batch, {k: inner(v) for k, v in batch.items()})
    if _is_namedtuple(batch):
        return type(batch)(*(inner(v) for v in batch))
    if isinstance(batch, (tuple, list)):
        return type(batch)(inner(v) for v in batch)
    if _is_dataclass(batch):
        return dataclasses.replace(batch, **{f.name: inner(getattr(batch, f.name))
                                             for f in dataclasses.fields(batch) if f.init})
    if movable is not None and _movable(batch):
        return movable(batch)
    return batch


def _same_mapping(original: Mapping, items: dict) -> Mapping:
    """``items`` in the original mapping's type where it can be rebuilt from a dict (OrderedDict,
    HF's BatchEncoding), else a plain dict."""
    if type(original) is dict:
        return items
    try:
        return type(original)(items)
    except TypeError:
        return items


def tensors(batch: Any) -> list[torch.Tensor]:
    """Every tensor in the batch, in structure order."""
    found: list[torch.Tensor] = []
    map_tensors(batch, found.append)
    return found


def to_device(batch: Any, device: torch.device | str, *, float64_to: torch.dtype | None = None) -> Any:
    """The same structure with every tensor on ``device``; ``float64_to`` also casts float64 tensors
    (numpy's default) to that dtype, so they meet a float32 model.

    The copy is ``non_blocking``: from pinned memory (DataLoader ``pin_memory=True``) it overlaps
    with compute on CUDA; otherwise it is an ordinary copy. A ``(Tensor, Tensor)`` pair takes a
    fast path that costs nothing over two ``.to`` calls. An object of your own with a ``.to``
    method is moved by ``obj.to(device, non_blocking=True)`` (DataLoader's pinning calls its
    ``pin_memory()`` where it has one).

    >>> x, y = to_device((torch.ones(2, dtype=torch.float64), torch.zeros(2)), "cpu", float64_to=torch.float32)
    >>> x.dtype, y.dtype
    (torch.float32, torch.float32)
    """
    if float64_to is None and type(batch) in (tuple, list) and len(batch) == 2 \
            and type(batch[0]) is torch.Tensor and type(batch[1]) is torch.Tensor:
        return type(batch)((batch[0].to(device, non_blocking=True), batch[1].to(device, non_blocking=True)))

    def move(tensor: torch.Tensor) -> torch.Tensor:
        if float64_to is not None and tensor.dtype == torch.float64:
            return tensor.to(device, float64_to, non_blocking=True)
        return tensor.to(device, non_blocking=True)

    return map_tensors(batch, move, movable=lambda obj: obj.to(device, non_blocking=True))


def count_samples(batch: Any) -> int:
    """The number of samples: the length of the batch's first per-sample list (images of different
    sizes, target dicts), else the leading dimension of its first tensor (of at least one
    dimension), else the length of its first list of plain values, else a user object's
    ``batch_size`` (or ``num_graphs``, as PyG's Batch has it).

    >>> count_samples({"input_ids": torch.zeros(8, 128, dtype=torch.long)})
    8
    >>> count_samples(([torch.zeros(3, 32, 48), torch.zeros(3, 40, 40)], [{"boxes": torch.zeros(2, 4)}] * 2))
    2
    """
    if type(batch) in (tuple, list) and batch and type(batch[0]) is torch.Tensor and batch[0].dim():
        return batch[0].shape[0]  # the (x, y) fast path
    columns: list[list] = []
    objects: list[Any] = []
    found = tensors(batch)
    map_tensors(batch, lambda t: t, column=lambda c: columns.append(c) or c,
                movable=lambda obj: objects.append(obj) or obj)
    per_sample = [c for c in columns if _per_sample(c)]
    if per_sample:
        return len(per_sample[0])
    for tensor in found:
        if tensor.dim():
            return tensor.shape[0]
    if columns:
        return len(columns[0])
    for obj in objects:
        size = getattr(obj, "batch_size", None) or getattr(obj, "num_graphs", None)
        if isinstance(size, int):
            return size
    raise DataError(f"cannot count the samples of a batch {describe(batch)}: it holds no tensor with a batch "
                    "dimension", hint="make each sample hold tensors, numpy arrays or numbers, so that "
                                      "collation stacks them along a leading batch dimension; an object "
                                      "of your own needs a `batch_size` attribute")


def split_batch(batch: Any) -> tuple[Any, Any]:
    """``(inputs, target)`` per the calling convention; the target is None when the batch has none.

    >>> split_batch({"input_ids": 1, "labels": 2})
    ({'input_ids': 1, 'labels': 2}, 2)
    """
    if isinstance(batch, (tuple, list)) and not _is_namedtuple(batch):
        if len(batch) != 2:
            raise DataError(f"a batch that is a {type(batch).__name__} must be (inputs, target); this one has "
                            f"{len(batch)} items: {describe(batch)}",
                            hint="nest several inputs in one item: return ((x1, x2), y) from __getitem__, "
                                 "or a dict whose keys are forward()'s argument names")
        return batch[0], batch[1]
    if _is_namedtuple(batch) and len(batch) == 2:
        return batch[0], batch[1]
    if isinstance(batch, Mapping):
        return batch, batch[TARGET_KEY] if TARGET_KEY in batch else batch.get(DETECTION_TARGET_KEY)
    return batch, None


def call_model(model: Callable[..., Any], inputs: Any) -> Any:
    """``model(*inputs)`` for a tuple or list, ``model(**inputs)`` for a dict, else ``model(inputs)``.

    >>> call_model(lambda a, b: a + b, (1, 2)), call_model(lambda a, b: a - b, {"b": 1, "a": 3})
    (3, 2)
    """
    if isinstance(inputs, torch.Tensor):
        return model(inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    if isinstance(inputs, Mapping):
        return model(**inputs)
    return model(inputs)


def _field(output: Any, name: str) -> Any:
    if isinstance(output, torch.Tensor):
        return None
    if isinstance(output, Mapping):
        return output.get(name)
    return getattr(output, name, None)


def output_loss(output: Any) -> torch.Tensor | None:
    """The loss the model computed itself (an attribute or key ``loss``; for a dict of scalar
    losses only, as a detection model returns in train mode, their sum), or None.

    >>> output_loss({"loss": 1.5, "logits": None}), output_loss(torch.ones(2))
    (1.5, None)
    >>> output_loss({"loss_classifier": torch.tensor(0.5), "loss_box_reg": torch.tensor(0.25)})
    tensor(0.7500)
    """
    own = _field(output, "loss")
    if own is None and is_loss_dict(output):
        return sum(output.values())  # type: ignore[return-value]
    return own


def is_loss_dict(output: Any) -> bool:
    """A dict whose values are all scalar floating tensors: the losses a detection model returns."""
    return (isinstance(output, Mapping) and len(output) > 0
            and all(isinstance(v, torch.Tensor) and v.dim() == 0 and v.is_floating_point() for v in output.values()))


def output_logits(output: Any) -> Any:
    """What the metrics (and torchwise's own loss) see: ``logits`` (attribute or key), else the output.

    >>> output_logits({"loss": 0.0, "logits": "L"}), output_logits("out")
    ('L', 'out')
    """
    logits = _field(output, "logits")
    return output if logits is None else logits


def slice_batch(batch: Any, start: int, stop: int) -> Any:
    """Samples ``start:stop`` of every tensor (and per-sample list), along the leading dimension.
    0-dim tensors and other leaves are shared by every slice.

    >>> slice_batch((torch.arange(6), ["a", "b", "c", "d", "e", "f"]), 2, 4)
    (tensor([2, 3]), ['c', 'd'])
    """
    return map_tensors(batch, lambda t: t[start:stop] if t.dim() else t, column=lambda c: c[start:stop])


def chunk_batch(batch: Any, pieces: int) -> list[Any]:
    """The batch cut into ``pieces`` parts of ``ceil(n / pieces)`` samples (fewer parts when the
    batch is short), the way ``torch.chunk`` cuts a tensor.

    >>> [len(part) for part in chunk_batch(torch.arange(10), 4)]
    [3, 3, 3, 1]
    """
    total = count_samples(batch)
    size = max(1, math.ceil(total / max(pieces, 1)))
    return [slice_batch(batch, start, start + size) for start in range(0, total, size)]


def collate(samples: list[Any]) -> Any:
    """Stack a list of samples into a batch of the same structure (torch's ``default_collate``
    per leaf, with dataclasses too); a mismatch names the key or index where samples differ.

    >>> collate([{"x": torch.ones(2), "id": "a"}, {"x": torch.zeros(2), "id": "b"}])
    {'x': tensor([[1., 1.],
            [0., 0.]]), 'id': ['a', 'b']}
    """
    return _collate(samples, "sample")


def _collate(samples: list[Any], where: str) -> Any:
    first = samples[0]
    if isinstance(first, torch.Tensor) or isinstance(first, _PLAIN) or type(first).__module__ == "numpy":
        if getattr(first, "ndim", 0) >= 2 and _ragged(samples):
            return SampleList(samples)  # images of different sizes: the model takes a list
        try:
            return default_collate(samples)
        except (RuntimeError, TypeError, ValueError) as err:
            kinds = sorted({_describe(s) for s in samples})[:3]
            raise DataError(f"the samples cannot be stacked into a batch at {where}: they hold "
                            f"{', '.join(kinds)} ({str(err).splitlines()[0]})",
                            hint="samples of different lengths need padding: give the DataLoader a collate_fn "
                                 "that pads (torch.nn.utils.rnn.pad_sequence; for tokenised text "
                                 "transformers' DataCollatorWithPadding), or make every sample the same "
                                 "shape") from None
    if isinstance(first, Mapping):
        for index, sample in enumerate(samples):
            if not isinstance(sample, Mapping) or set(sample) != set(first):
                keys = sorted(sample) if isinstance(sample, Mapping) else type(sample).__name__
                raise DataError(f"{where} {index} has keys {keys}, the first sample has {sorted(first)}",
                                hint="every sample must have the same keys")
        if where != "sample" and (DETECTION_KEY in first or any(
                getattr(first[k], "ndim", 0) >= 2 and _ragged([s[k] for s in samples]) for k in first)):
            # A target dict per image (torchvision's detection format): one dict per sample, in
            # every batch, also in one whose images happen to hold as many boxes each.
            return SampleList(samples)
        return _same_mapping(first, {k: _collate([s[k] for s in samples], f"{where}[{k!r}]") for k in first})
    if _is_dataclass(first):
        names = [f.name for f in dataclasses.fields(first) if f.init]
        return type(first)(**{n: _collate([getattr(s, n) for s in samples], f"{where}.{n}") for n in names})
    if isinstance(first, list) and any(not isinstance(s, list) or len(s) != len(first) for s in samples):
        return SampleList(samples)  # a list per sample (annotations of each image): kept per sample
    if isinstance(first, (tuple, list)):
        # One pass in C over the samples' types and lengths; the loop below only names the odd one.
        same = len(set(map(type, samples))) == 1 and len(set(map(len, samples))) == 1
        for index, sample in enumerate([] if same else samples):
            if not isinstance(sample, (tuple, list)) or len(sample) != len(first):
                raise DataError(f"{where} {index} is {_describe(sample)}, the first sample is {_describe(first)}",
                                hint="every sample must have the same structure")
        parts = [_collate([s[i] for s in samples], f"{where}[{i}]") for i in range(len(first))]
        return type(first)(*parts) if _is_namedtuple(first) else type(first)(parts)
    raise DataError(f"cannot batch {where}: {type(first).__name__} is not a tensor, array, number, string, "
                    "dict, list, tuple or dataclass",
                    hint="return tensors or numpy arrays from __getitem__, or give the DataLoader a collate_fn")


def _ragged(values: list[Any]) -> bool:
    """Tensors of the same rank whose shapes differ (they cannot stack)."""
    if not all(isinstance(v, torch.Tensor) for v in values):
        return False
    return len({v.dim() for v in values}) == 1 and len({tuple(v.shape) for v in values}) > 1


def describe(batch: Any, *, limit: int = 300) -> str:
    """A short text of the structure, shapes and dtypes, for error messages.

    >>> describe({"x": torch.zeros(2, 3), "id": ["a", "b"], "n": 3})
    "{'x': Tensor[2, 3] float32, 'id': list[2 str], 'n': int}"
    """
    text = _describe(batch)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"Tensor{list(value.shape)} {str(value.dtype).removeprefix('torch.')}"
    if type(value).__module__ == "numpy" and hasattr(value, "shape"):
        return f"ndarray{list(value.shape)} {value.dtype}"
    if _is_column(value):
        return f"list[{len(value)} {type(value[0]).__name__}]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in value.items()) + "}"
    if _is_namedtuple(value):
        inner = ", ".join(f"{k}={_describe(v)}" for k, v in zip(value._fields, value, strict=True))
        return f"{type(value).__name__}({inner})"
    if isinstance(value, tuple):
        return "(" + ", ".join(_describe(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_describe(v) for v in value) + "]"
    if _is_dataclass(value):
        inner = ", ".join(f"{f.name}={_describe(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__name__}({inner})"
    return type(value).__name__
