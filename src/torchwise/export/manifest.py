"""The manifest beside every artefact (``<artefact name>.json``): everything needed to use it without torchwise.

It says which tensors go in (names, shapes, dtypes, the dynamic batch dim), what comes out
(class names, regression targets), the whole transform from the raw features a user has to the
model's input, and where the artefact came from (run, checkpoint, versions, its sha256)::

    {"format": "onnx", "artefact": "model.onnx", "sha256": "...",
     "inputs": {"structure": "tensor", "tensors": [{"name": "input", "shape": [null, 64],
                "dtype": "float32", "dynamic_dims": [0]}]},
     "feature_names": ["pixel_0_0", ...], "target_name": "target",
     "outputs": [{"name": "output", "shape": [null, 10], "dtype": "float32", "dynamic_dims": [0]}],
     "task": {"type": "classification", "prediction": "output", "classes": ["0", ..., "9"]},
     "normalization": {"scale": 0.0625, "mean": [...], "std": [...]},
     "verification": {...}, "versions": {...}, "source": {"run": ..., "checkpoint": "best", ...}}

``normalization`` means ``model_input = (raw * scale - mean) / std``, per feature.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from torchwise.errors import ExportError, TorchwiseError

MANIFEST_VERSION = 1


@dataclass(frozen=True)
class Normalization:
    """``(raw * scale - mean) / std``: the raw features a user has -> the model's input.

    >>> norm = Normalization(scale=1 / 16, mean=[0.5, 0.0], std=[0.25, 1.0])
    >>> norm.apply(torch.tensor([[16.0, 8.0]]))
    tensor([[2.0000, 0.5000]])
    """

    scale: float
    mean: Any  # nested lists in the sample's shape
    std: Any

    @classmethod
    def identity(cls, sample_shape: tuple[int, ...]) -> Normalization:
        return cls(scale=1.0, mean=torch.zeros(sample_shape).tolist(), std=torch.ones(sample_shape).tolist())

    def apply(self, raw: torch.Tensor) -> torch.Tensor:
        # The same float32 operations, in the same order, as the training data went through
        # (the source's scaling, then the standardiser), so the inputs match bit for bit.
        x = raw.to(torch.float32)
        if self.scale != 1.0:
            x = x * torch.tensor(self.scale, dtype=torch.float32)
        mean = torch.tensor(self.mean, dtype=torch.float32)
        std = torch.tensor(self.std, dtype=torch.float32)
        if torch.count_nonzero(mean) or torch.count_nonzero(std - 1):
            x = (x - mean) / std
        return x

    def to_json(self) -> dict[str, Any]:
        return {"scale": self.scale, "mean": self.mean, "std": self.std}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Normalization | None:
        return None if data is None else cls(scale=data["scale"], mean=data["mean"], std=data["std"])


def manifest_path(artefact: Path) -> Path:
    """``model.onnx`` -> ``model.onnx.json``: the whole name, so that a folder can hold the same
    model in several formats, each with its own manifest."""
    return artefact.with_name(artefact.name + ".json")


def sha256_of(path: Path) -> str:
    """sha256 of an artefact, which must be a regular file (a FIFO or /dev/zero would never end)."""
    from torchwise.runs.safe_io import FolderFileError, open_regular

    try:
        fd = open_regular(path)
    except FolderFileError as err:
        raise ExportError(err.message, hint="pass the file `torchwise export` wrote") from None
    digest = hashlib.sha256()
    with open(fd, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """The fields predict reads, with the types export writes, and every input shape within the
    sample limit, before anything is built or allocated from them."""
    from torchwise.runs.safe_io import sample_elements

    inputs, outputs = manifest.get("inputs"), manifest.get("outputs")
    tensors = inputs.get("tensors") if isinstance(inputs, dict) else None
    fine = (isinstance(manifest.get("format"), str) and isinstance(tensors, list) and tensors
            and all(isinstance(t, dict) and isinstance(t.get("shape"), list) for t in tensors)
            and isinstance(outputs, list)
            and all(isinstance(o, dict) and isinstance(o.get("name"), str) for o in outputs)
            and isinstance(manifest.get("task"), dict)
            and isinstance(manifest.get("normalization"), (dict, type(None))))
    if not fine:
        raise ExportError(f"{path} is not a manifest torchwise writes (a field is missing or of another type)",
                          hint="export again to rewrite it")
    for tensor in tensors:
        try:
            sample_elements(path, [n if n is not None else 1 for n in tensor["shape"]])
        except TorchwiseError as err:
            raise ExportError(err.message, hint=err.hint) from None


def versions(fmt: str) -> dict[str, str | None]:
    import platform

    from torchwise import __version__

    found: dict[str, str | None] = {"torchwise": __version__, "torch": torch.__version__,
                                    "python": platform.python_version()}
    if fmt == "onnx":
        from importlib.metadata import PackageNotFoundError, version

        for package in ("onnx", "onnxscript", "onnxruntime"):
            try:
                found[package] = version(package)
            except PackageNotFoundError:
                found[package] = None
    return found


def write_manifest(artefact: Path, manifest: dict[str, Any]) -> Path:
    """Write ``<artefact name>.json`` beside the artefact, with the artefact's sha256 filled in."""
    manifest = {"manifest_version": MANIFEST_VERSION, **manifest, "artefact": artefact.name,
                "sha256": sha256_of(artefact)}
    from torchwise.runs.safe_io import write_bytes_atomic

    path = manifest_path(artefact)
    write_bytes_atomic(path, (json.dumps(manifest, indent=2) + "\n").encode())
    return path


def read_manifest(artefact: Path, *, check_sha256: bool = True) -> dict[str, Any]:
    """The manifest of an artefact, checked against the artefact's bytes."""
    path = manifest_path(artefact)
    if not artefact.is_file():
        raise ExportError(f"artefact {artefact} does not exist",
                          hint="pass the file `torchwise export` wrote (its path is printed at the end)")
    if not path.is_file():
        raise ExportError(f"{artefact} has no manifest {path.name} beside it",
                          hint="torchwise predict needs the manifest `torchwise export` writes; export again")
    from torchwise.runs.safe_io import FolderFileError, read_json

    try:
        manifest = read_json(path)
    except FolderFileError as err:
        raise ExportError(err.message, hint="export again to rewrite it") from None
    check_manifest(path, manifest)
    if check_sha256 and manifest.get("sha256") != sha256_of(artefact):
        raise ExportError(f"{artefact} does not match the sha256 in {path.name}: the file changed after export",
                          hint="export again, or restore the artefact that was exported")
    return manifest
