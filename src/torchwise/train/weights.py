"""Weights from elsewhere (``model.init_from``): safetensors, or a .pt read without unpickling code.

``.pt/.pth/.bin`` files are read with ``torch.load(weights_only=True)`` and nothing else: a file
that needs full unpickling is refused, never opened with ``weights_only=False``, because
unpickling runs whatever code the file's author put in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from torchwise.errors import CheckpointError

_PICKLE_SUFFIXES = (".pt", ".pth", ".bin")
# Where common tools nest the weights inside a saved dict.
_NESTED_KEYS = ("state_dict", "model", "model_state_dict")
_SHOWN = 5


@dataclass
class WeightsReport:
    """How a set of saved weights fits a model; empty lists mean a perfect fit."""

    loaded: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    # (key, shape in the file, shape in the model)
    shape_mismatches: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = field(
        default_factory=list
    )

    @property
    def ok(self) -> bool:
        return not (self.missing or self.unexpected or self.shape_mismatches)

    def describe(self) -> str:
        """One line per kind of problem, naming the first few keys."""
        parts = []
        if self.missing:
            parts.append(f"missing keys ({len(self.missing)}): {self.missing[:_SHOWN]}")
        if self.unexpected:
            parts.append(f"unexpected keys ({len(self.unexpected)}): {self.unexpected[:_SHOWN]}")
        if self.shape_mismatches:
            shown = ", ".join(
                f"{key}: file {list(found)} vs model {list(wanted)}"
                for key, found, wanted in self.shape_mismatches[:_SHOWN]
            )
            parts.append(f"shape mismatches ({len(self.shape_mismatches)}): {shown}")
        return "; ".join(parts) or "all keys match"


def compare_state_dicts(
    expected: Mapping[str, torch.Tensor], found: Mapping[str, torch.Tensor]
) -> WeightsReport:
    """Compare a model's ``state_dict()`` (``expected``) with saved weights (``found``).

    >>> model_state = {"w": torch.zeros(2, 3)}
    >>> report = compare_state_dicts(model_state, {"w": torch.zeros(3, 2), "b": torch.zeros(1)})
    >>> report.unexpected, report.shape_mismatches
    (['b'], [('w', (3, 2), (2, 3))])
    """
    report = WeightsReport()
    for key, wanted in expected.items():
        if key not in found:
            report.missing.append(key)
        elif tuple(found[key].shape) != tuple(wanted.shape):
            report.shape_mismatches.append((key, tuple(found[key].shape), tuple(wanted.shape)))
        else:
            report.loaded.append(key)
    report.unexpected = [key for key in found if key not in expected]
    return report


def load_foreign_weights(model: torch.nn.Module, path: Path, *, strict: bool) -> WeightsReport:
    """Load weights saved by another tool into ``model``; return how well they fit.

    With ``strict=True`` any missing key, unexpected key or shape mismatch raises
    `CheckpointError` before the model is touched; with ``strict=False`` the matching
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
        raise CheckpointError(
            f"the weights in {path} do not fit the model: {report.describe()}",
            hint="check that model.init_from names weights for this architecture, "
            "or set strict: false to load only the tensors that fit",
        )
    # strict=False here: missing keys keep the model's own initialisation on purpose.
    model.load_state_dict({key: found[key] for key in report.loaded}, strict=False)
    return report


def _read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    if path.is_dir():  # a torchwise checkpoint folder, e.g. runs/digits/checkpoints/best
        from torchwise.train.checkpoint import load_checkpoint

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
