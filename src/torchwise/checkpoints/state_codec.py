"""A nested training state as named tensors plus a JSON skeleton, and back, exactly.

The skeleton is plain JSON: ``null``, booleans, strings, ints (any size) and finite floats
stand for themselves, a list for a list, and an object whose keys do not start with ``$``
for a dict with string keys. Everything else is a one-kind tagged object:

- ``{"$tuple": [...]}``, ``{"$dict": [[key, value], ...]}`` (int keys, or keys starting with $)
- ``{"$float": "nan" | "-nan" | "inf" | "-inf"}`` (JSON has no such numbers)
- ``{"$tensor": name}``: a tensor in the tensor file, named by its path in the state
- ``{"$ndarray": name, "dtype": "<u4", "shape": [624]}``: a numpy array, stored as raw bytes
- ``{"$npscalar": "<f8", "hex": "..."}``: a numpy scalar, its bytes in hex

>>> import torch
>>> state = {"step": 3, "betas": (0.9, 0.999), "state": {0: {"exp_avg": torch.zeros(2)}}}
>>> tensors, skeleton = flatten_state(state)
>>> list(tensors)
['state.state[0].exp_avg']
>>> back = unflatten_state(tensors, skeleton)
>>> back["betas"], type(list(back["state"])[0])
((0.9, 0.999), <class 'int'>)
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import torch

from torchwise.checkpoints.tensor_file import DTYPE_CODES
from torchwise.errors import CheckpointError

ROOT = "state"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# bool, signed and unsigned int, float, complex, timedelta, datetime: fixed-size, no objects
_NUMPY_KINDS = "biufcmM"
_TAG_FIELDS: dict[str, frozenset[str]] = {
    "$tuple": frozenset({"$tuple"}),
    "$dict": frozenset({"$dict"}),
    "$float": frozenset({"$float"}),
    "$tensor": frozenset({"$tensor"}),
    "$ndarray": frozenset({"$ndarray", "dtype", "shape"}),
    "$npscalar": frozenset({"$npscalar", "hex"}),
}
_NON_FINITE = {"nan": math.nan, "-nan": -math.nan, "inf": math.inf, "-inf": -math.inf}
_HINT_UNSUPPORTED = (
    "a checkpoint holds tensors, numpy arrays and scalars, and JSON-like values "
    "(dict with str or int keys, list, tuple, str, int, float, bool, None); convert this "
    "value to one of them, or leave it out of the state"
)
_HINT_CORRUPT = (
    "the checkpoint was edited or corrupted; resume from another checkpoint or start over"
)


def flatten_state(obj: Any, *, root: str = ROOT) -> tuple[dict[str, torch.Tensor], Any]:
    """Split ``obj`` into ``(tensors by name, JSON-able skeleton)``; see the module docstring.

    Tensors that are the same view of the same memory get one name, and come back as one
    object. Raises `CheckpointError` naming the path of the first unsupported value.

    >>> flatten_state({"seed": 2**64 - 1, "loss": float("nan")})[1]
    {'seed': 18446744073709551615, 'loss': {'$float': 'nan'}}
    """
    flattener = _Flattener()
    skeleton = flattener.encode(obj, root)
    return flattener.tensors, skeleton


def unflatten_state(tensors: dict[str, torch.Tensor], skeleton: Any, *, root: str = ROOT) -> Any:
    """Rebuild the object ``flatten_state`` split; every named tensor must be used exactly.

    Raises `CheckpointError` where the skeleton is malformed, names a tensor that is not in
    ``tensors``, or leaves one of ``tensors`` unused.

    >>> unflatten_state({}, {"$tuple": [1, {"$float": "-inf"}]})
    (1, -inf)
    """
    unflattener = _Unflattener(tensors)
    obj = unflattener.decode(skeleton, root)
    unused = sorted(set(tensors) - unflattener.used)
    if unused:
        raise CheckpointError(
            f"the tensor file holds {len(unused)} tensor(s) the skeleton does not name, "
            f"e.g. {unused[:3]}",
            hint=_HINT_CORRUPT,
        )
    return obj


def view_key(tensor: torch.Tensor) -> tuple[Any, ...] | None:
    """Equal for two tensors that are the same view of the same memory; None for empty ones."""
    if tensor.numel() == 0:  # empty tensors have no memory to share
        return None
    return (
        tensor.device,
        tensor.untyped_storage().data_ptr(),
        tensor.storage_offset(),
        tuple(tensor.shape),
        tensor.stride(),
        tensor.dtype,
    )


def child_path(path: str, key: str | int) -> str:
    """``state.optimizer`` for a str key that is a name, ``state[0]`` or ``state['a.b']`` else."""
    if isinstance(key, str) and _IDENTIFIER.match(key):
        return f"{path}.{key}"
    return f"{path}[{key!r}]"


class _Flattener:
    def __init__(self) -> None:
        self.tensors: dict[str, torch.Tensor] = {}
        self._name_of_view: dict[tuple[Any, ...], str] = {}

    def encode(self, obj: Any, path: str) -> Any:
        kind = type(obj)
        if obj is None or kind in (bool, int, str):
            return obj
        if kind is float:
            return obj if math.isfinite(obj) else {"$float": _non_finite_name(obj)}
        if kind is list:
            return [self.encode(value, f"{path}[{i}]") for i, value in enumerate(obj)]
        if kind is tuple:
            return {"$tuple": [self.encode(value, f"{path}[{i}]") for i, value in enumerate(obj)]}
        if kind is dict:
            return self._encode_dict(obj, path)
        if kind is torch.Tensor:
            return {"$tensor": self._add_tensor(obj, path)}
        if kind is np.ndarray:
            return self._encode_ndarray(obj, path)
        if isinstance(obj, np.generic) and _numpy_dtype_ok(obj.dtype):
            return {"$npscalar": obj.dtype.str, "hex": obj.tobytes().hex()}
        raise CheckpointError(
            f"cannot save the training state: {path} is a {kind.__module__}.{kind.__qualname__}",
            hint=_HINT_UNSUPPORTED,
        )

    def _encode_dict(self, obj: dict[Any, Any], path: str) -> Any:
        for key in obj:
            if type(key) not in (str, int):
                raise CheckpointError(
                    f"cannot save the training state: {path} has a key {key!r} of type "
                    f"{type(key).__qualname__}; only str and int keys are supported",
                    hint=_HINT_UNSUPPORTED,
                )
        if all(type(key) is str and not key.startswith("$") for key in obj):
            return {key: self.encode(value, child_path(path, key)) for key, value in obj.items()}
        return {
            "$dict": [
                [key, self.encode(value, child_path(path, key))] for key, value in obj.items()
            ]
        }

    def _add_tensor(self, tensor: torch.Tensor, path: str) -> str:
        if tensor.layout != torch.strided or tensor.device.type == "meta":
            raise CheckpointError(
                f"cannot save the training state: {path} is a {tensor.layout} tensor on "
                f"{tensor.device}; only dense tensors with data can be saved",
                hint="call .to_dense() or materialise it before saving",
            )
        if tensor.dtype not in DTYPE_CODES:
            raise CheckpointError(
                f"cannot save the training state: {path} has dtype {tensor.dtype}",
                hint=f"convert it; supported dtypes: {sorted(map(str, DTYPE_CODES))}",
            )
        view = view_key(tensor)
        if view is not None:
            if view in self._name_of_view:
                return self._name_of_view[view]
            self._name_of_view[view] = path
        self.tensors[path] = tensor.detach()
        return path

    def _encode_ndarray(self, array: np.ndarray, path: str) -> Any:
        if not _numpy_dtype_ok(array.dtype):
            raise CheckpointError(
                f"cannot save the training state: {path} is a numpy array of dtype {array.dtype}",
                hint="only numeric and bool numpy arrays can be saved",
            )
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8).copy()
        self.tensors[path] = torch.from_numpy(raw)
        return {"$ndarray": path, "dtype": array.dtype.str, "shape": list(array.shape)}


class _Unflattener:
    def __init__(self, tensors: dict[str, torch.Tensor]) -> None:
        self.tensors = tensors
        self.used: set[str] = set()

    def decode(self, node: Any, path: str) -> Any:
        kind = type(node)
        if node is None or kind in (bool, int, str):
            return node
        if kind is float and math.isfinite(node):
            return node
        if kind is list:
            return [self.decode(value, f"{path}[{i}]") for i, value in enumerate(node)]
        if kind is dict:
            tag = next((key for key in node if isinstance(key, str) and key.startswith("$")), None)
            if tag is None:
                return {
                    key: self.decode(value, child_path(path, key)) for key, value in node.items()
                }
            return self._decode_tagged(tag, node, path)
        raise _corrupt(path, f"a {kind.__qualname__} ({node!r:.40}) is not a skeleton value")

    def _decode_tagged(self, tag: str, node: dict[str, Any], path: str) -> Any:
        if _TAG_FIELDS.get(tag) != frozenset(node):
            raise _corrupt(path, f"unknown or malformed tagged value with keys {sorted(node)[:4]}")
        value = node[tag]
        if tag == "$tuple" and type(value) is list:
            return tuple(self.decode(item, f"{path}[{i}]") for i, item in enumerate(value))
        if tag == "$dict" and type(value) is list:
            return self._decode_items(value, path)
        if tag == "$float" and type(value) is str and value in _NON_FINITE:
            return _NON_FINITE[value]
        if tag == "$tensor":
            return self._take(value, path)
        if tag == "$ndarray":
            return self._decode_ndarray(node, path)
        if tag == "$npscalar" and type(node["hex"]) is str:
            dtype = _numpy_dtype(value, path)
            try:
                raw = bytes.fromhex(node["hex"])
            except ValueError:
                raise _corrupt(path, "the numpy scalar's bytes are not hex") from None
            if len(raw) != dtype.itemsize:
                raise _corrupt(
                    path, f"a {dtype} scalar needs {dtype.itemsize} bytes, not {len(raw)}"
                )
            return np.frombuffer(raw, dtype=dtype)[0]
        raise _corrupt(path, f"malformed {tag} value")

    def _decode_items(self, items: list[Any], path: str) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for item in items:
            if type(item) is not list or len(item) != 2 or type(item[0]) not in (str, int):
                raise _corrupt(path, "a $dict entry is not a [str or int key, value] pair")
            key, value = item
            if key in result:
                raise _corrupt(path, f"the key {key!r} appears twice")
            result[key] = self.decode(value, child_path(path, key))
        return result

    def _take(self, name: Any, path: str) -> torch.Tensor:
        if type(name) is not str or name not in self.tensors:
            raise _corrupt(
                path, f"names the tensor {name!r:.80}, which the tensor file does not hold"
            )
        self.used.add(name)
        return self.tensors[name]

    def _decode_ndarray(self, node: dict[str, Any], path: str) -> np.ndarray:
        raw = self._take(node["$ndarray"], path)
        dtype = _numpy_dtype(node["dtype"], path)
        shape = node["shape"]
        if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape):
            raise _corrupt(path, f"the array shape {shape!r:.40} is not a list of sizes")
        if (
            raw.dtype != torch.uint8
            or raw.dim() != 1
            or raw.numel() != dtype.itemsize * math.prod(shape)
        ):
            raise _corrupt(path, f"the stored bytes do not hold a {dtype} array of shape {shape}")
        return np.frombuffer(bytearray(raw.numpy().tobytes()), dtype=dtype).reshape(shape)


def _non_finite_name(value: float) -> str:
    if value != value:  # keep the sign of a nan, which repr() drops
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return repr(value)


def _numpy_dtype_ok(dtype: np.dtype[Any]) -> bool:
    return dtype.kind in _NUMPY_KINDS and dtype.fields is None and not dtype.hasobject


def _numpy_dtype(text: Any, path: str) -> np.dtype[Any]:
    try:
        dtype = np.dtype(text) if type(text) is str else None
    except Exception:  # numpy's dtype parser raises several kinds of error on bad text
        dtype = None
    if dtype is None or not _numpy_dtype_ok(dtype):
        raise _corrupt(path, f"{text!r:.40} is not a numeric numpy dtype")
    return dtype


def _corrupt(path: str, what: str) -> CheckpointError:
    return CheckpointError(
        f"the training state skeleton at {path} is invalid: {what}", hint=_HINT_CORRUPT
    )
