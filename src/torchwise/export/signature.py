"""What an exported artefact takes and gives: named tensors with shapes, dtypes and dynamic dims.

An export flattens the model's inputs (a tensor, a tuple of tensors, or a dict of tensors, called
the way `torchwise.data.batch.call_model` calls the model) into named tensors, because that is
what every runtime sees: ONNX inputs have names, and a user without torchwise needs to know the
order. The batch dimension (dim 0 of every input) is the only dynamic one.

>>> import torch
>>> sig = InputSignature.of({"ids": torch.zeros(4, 7, dtype=torch.long), "mask": torch.ones(4, 7)},
...                         dynamic_batch=True)
>>> [(t.name, t.shape, t.dtype) for t in sig.tensors]
[('ids', (None, 7), 'int64'), ('mask', (None, 7), 'float32')]
>>> sig.describe()
'ids: int64 [batch, 7], mask: float32 [batch, 7]'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch

from torchwise.data.batch import describe, tensors
from torchwise.errors import DataError, ExportError

Structure = Literal["tensor", "tuple", "dict"]


@dataclass(frozen=True)
class TensorSpec:
    """One input or output tensor: ``shape`` holds None where the size is dynamic (the batch)."""

    name: str
    shape: tuple[int | None, ...]
    dtype: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype,
                "dynamic_dims": [i for i, size in enumerate(self.shape) if size is None]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TensorSpec:
        return cls(name=data["name"], shape=tuple(data["shape"]), dtype=data["dtype"])

    def describe(self) -> str:
        dims = ", ".join("batch" if size is None else str(size) for size in self.shape)
        return f"{self.name}: {self.dtype} [{dims}]"


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


@dataclass(frozen=True)
class InputSignature:
    """The inputs of an artefact: their structure (how the model is called) and each tensor."""

    structure: Structure
    tensors: tuple[TensorSpec, ...]

    @classmethod
    def of(cls, inputs: Any, *, dynamic_batch: bool) -> InputSignature:
        """The signature of one example batch of inputs."""
        structure, named = _named_tensors(inputs)
        specs = tuple(TensorSpec(name=name, dtype=dtype_name(t.dtype),
                                 shape=tuple(None if dynamic_batch and dim == 0 else size
                                             for dim, size in enumerate(t.shape)))
                      for name, t in named)
        return cls(structure=structure, tensors=specs)

    @property
    def names(self) -> list[str]:
        return [spec.name for spec in self.tensors]

    @property
    def dynamic_batch(self) -> bool:
        return any(spec.shape and spec.shape[0] is None for spec in self.tensors)

    def describe(self) -> str:
        return ", ".join(spec.describe() for spec in self.tensors)

    def flatten(self, inputs: Any, *, any_batch: bool = False) -> list[torch.Tensor]:
        """The input tensors in signature order, checked against it: a wrong feature count or dtype
        names what the artefact expects. ``any_batch`` accepts any number of samples (a whole
        input file that is cut into batches later)."""
        structure, named = _named_tensors(inputs)
        got = {name: t for name, t in named}
        if structure != self.structure or set(got) != set(self.names):
            raise DataError(f"the model expects {self.describe()}; got {describe(inputs)}",
                            hint=f"pass the inputs as a {self.structure} of the tensors named above")
        flat = [got[name] for name in self.names]
        for spec, tensor in zip(self.tensors, flat, strict=True):
            check_tensor(spec, tensor, any_batch=any_batch)
        return flat

    def rebuild(self, flat: Sequence[torch.Tensor]) -> Any:
        """The call structure from tensors in signature order (the inverse of `flatten`)."""
        if self.structure == "tensor":
            return flat[0]
        if self.structure == "tuple":
            return tuple(flat)
        return dict(zip(self.names, flat, strict=True))

    def export_args(self, inputs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``(args, kwargs)`` for torch.export / torch.onnx, matching `call_model`."""
        if self.structure == "tensor":
            return (inputs,), {}
        if self.structure == "tuple":
            return tuple(inputs), {}
        return (), dict(inputs)

    def dynamic_shapes(self) -> Any:
        """torch.export's ``dynamic_shapes``: one shared ``batch`` Dim on dim 0 of every input."""
        if not self.dynamic_batch:
            return None
        batch = torch.export.Dim("batch")
        per_tensor = [{0: batch} if spec.shape and spec.shape[0] is None else None for spec in self.tensors]
        if self.structure == "dict":
            return dict(zip(self.names, per_tensor, strict=True))
        return tuple(per_tensor)  # one entry per positional argument, as in export_args

    def to_json(self) -> dict[str, Any]:
        return {"structure": self.structure, "tensors": [spec.to_json() for spec in self.tensors]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InputSignature:
        return cls(structure=data["structure"], tensors=tuple(TensorSpec.from_json(t) for t in data["tensors"]))


def check_tensor(spec: TensorSpec, tensor: torch.Tensor, *, any_batch: bool = False, dtype: bool = True) -> None:
    """``tensor`` fits ``spec``: same dtype, same rank, same size in every static dim (but the
    batch dim with ``any_batch``; the dtype is not checked without ``dtype``)."""
    if any_batch and spec.shape:
        spec = TensorSpec(name=spec.name, shape=(None, *spec.shape[1:]), dtype=spec.dtype)
    problem = None
    if dtype and dtype_name(tensor.dtype) != spec.dtype:
        problem = f"dtype {dtype_name(tensor.dtype)}"
    elif tensor.dim() != len(spec.shape):
        problem = f"shape {list(tensor.shape)}"
    elif spec.shape and spec.shape[0] is not None and tensor.shape[0] != spec.shape[0]:
        problem = f"a batch of {tensor.shape[0]} (this artefact takes batches of exactly {spec.shape[0]})"
    elif tensor.dim() == 2 and tensor.shape[1] != spec.shape[1]:
        problem = f"{tensor.shape[1]} features"
    elif any(want is not None and want != size for want, size in zip(spec.shape, tensor.shape, strict=True)):
        problem = f"shape {list(tensor.shape)}"
    if problem is not None:
        raise DataError(f"the model expects {spec.describe()}; the input has {problem}",
                        hint=f"give {spec.name} as {spec.dtype} with shape "
                             f"[{', '.join('N' if s is None else str(s) for s in spec.shape)}]")


def _named_tensors(inputs: Any) -> tuple[Structure, list[tuple[str, torch.Tensor]]]:
    """The call structure and its tensors with the names the artefact gives them."""
    if isinstance(inputs, torch.Tensor):
        return "tensor", [("input", inputs)]
    if isinstance(inputs, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in inputs) and inputs:
        return "tuple", [(f"input_{i}", t) for i, t in enumerate(inputs)]
    if isinstance(inputs, Mapping) and inputs and all(isinstance(t, torch.Tensor) for t in inputs.values()):
        return "dict", [(str(k), t) for k, t in inputs.items()]
    raise ExportError(f"cannot export a model called with {describe(inputs)}",
                      hint="export takes inputs that are a tensor, a tuple of tensors or a dict of tensors "
                           "(the model called as model(x), model(*x) or model(**x))")


def output_specs(output: Any, *, dynamic_batch: bool) -> list[TensorSpec]:
    """The output tensors, named by their key (a dict), ``output`` (one tensor) or ``output_<i>``."""
    leaves = tensors(output)
    if isinstance(output, torch.Tensor):
        names = ["output"]
    elif isinstance(output, Mapping) and len(output) == len(leaves):
        names = [str(k) for k in output]
    else:
        names = [f"output_{i}" for i in range(len(leaves))]
    return [TensorSpec(name=name, dtype=dtype_name(t.dtype),
                       shape=tuple(None if dynamic_batch and dim == 0 else size for dim, size in enumerate(t.shape)))
            for name, t in zip(names, leaves, strict=True)]


def prediction_output(names: Sequence[str]) -> str | None:
    """The output predictions are made from: ``logits`` when the model returns it by name (as
    `torchwise.data.batch.output_logits` reads it), else the first output."""
    return "logits" if "logits" in names else (names[0] if names else None)
