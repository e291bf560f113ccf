"""Weights from elsewhere (``model.init_from``): safetensors, or a .pt read without unpickling code.

``.pt/.pth/.bin`` files are read with ``torch.load(weights_only=True)`` and nothing else: a file
that needs full unpickling is refused, never opened with ``weights_only=False``, because
unpickling runs whatever code the file's author put in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from torchwise.checkpoints.checkpoint import load_checkpoint
from torchwise.checkpoints.compare import WeightsReport, compare_state_dicts
from torchwise.errors import CheckpointError, WeightsMismatch

_PICKLE_SUFFIXES = (".pt", ".pth", ".bin")
# Where common tools nest the weights inside a saved dict.
_NESTED_KEYS = ("state_dict", "model", "model_state_dict")


def load_foreign_weights(model: torch.nn.Module, path: Path, *, strict: bool) -> WeightsReport:
    """Load weights saved by another tool into ``model``; return how well they fit.

    With ``strict=True`` any missing key, unexpected key or shape mismatch raises
    `WeightsMismatch` (a `CheckpointError`) before the model is touched; with ``strict=False`` the matching
    tensors are loaded and the report lists the rest.

    >>> import tempfile
    >>> model = torch.nn.Linear(2, 1)
    >>> path = Path(tempfile.mkdtemp()) / "w.pt"
    >>> torch.save({"state_dict": model.state_dict()}, path)
    >>> load_foreign_weights(torch.nn.Linear(2, 1), path, strict=True).ok
    True
    """
    path = Path(path)
    found = _read_state_dict(path)
    report = compare_state_dicts(model.state_dict(), found)
    if strict and not report.ok:
        raise WeightsMismatch(
            f"the weights in {path} do not fit the model: {report.describe()}",
            report=report,
            hint="check that model.init_from names weights for this architecture, "
            "or set strict: false to load only the tensors that fit",
        )
    # strict=False here: missing keys keep the model's own initialisation on purpose.
    model.load_state_dict({key: found[key] for key in report.loaded}, strict=False)
    return report


def _read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    if path.is_dir():  # a torchwise checkpoint folder, e.g. runs/digits/checkpoints/best
        return load_checkpoint(path).model_state
    if not path.is_file():
        raise CheckpointError(
            f"no weights file at {path}", hint="check the path in model.init_from"
        )
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        try:
            return load_file(path)
        except Exception as error:  # safetensors raises its own and OS errors alike
            raise CheckpointError(
                f"{path} is not a readable safetensors file: {error}",
                hint="the file is corrupted or cut off; download or export it again",
            ) from None
    if path.suffix not in _PICKLE_SUFFIXES:
        raise CheckpointError(
            f"cannot read weights from {path}: unknown file type {path.suffix!r}",
            hint="use a .safetensors file, or a .pt/.pth/.bin state_dict saved by torch.save",
        )
    try:
        loaded: Any = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # pickle, zip and torch errors all mean the same thing here
        raise CheckpointError(
            f"{path} cannot be read safely: torch.load(weights_only=True) refused it ({error})",
            hint="the file holds more than tensors (e.g. a pickled class), and torchwise never "
            "unpickles code; convert it once in a trusted environment, e.g. "
            "safetensors.torch.save_file(model.state_dict(), 'weights.safetensors')",
        ) from None
    return _unwrap(loaded, path)


def _unwrap(loaded: Any, path: Path) -> dict[str, torch.Tensor]:
    if isinstance(loaded, Mapping) and not _is_state_dict(loaded):
        for key in _NESTED_KEYS:
            if key in loaded and _is_state_dict(loaded[key]):
                return dict(loaded[key])
    if isinstance(loaded, Mapping) and _is_state_dict(loaded):
        return dict(loaded)
    raise CheckpointError(
        f"{path} does not hold a state_dict (a dict of tensor names to tensors)",
        hint=f"save model.state_dict(), or a dict with it under one of {list(_NESTED_KEYS)}",
    )


def _is_state_dict(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and len(value) > 0
        and all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in value.items())
    )
