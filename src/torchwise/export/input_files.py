"""Reading the raw inputs ``torchwise predict`` is given: a CSV, an ``.npz``, a ``.pt`` or an image folder.

Each reader returns `RawInputs`: the inputs in the call structure the model takes (raw, before
the run's normalisation), per-sample ids for the output file, and the true labels when the
file carries the target column (then predict can report accuracy).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from torchwise.errors import DataError
from torchwise.export.signature import InputSignature

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif")


@dataclass
class RawInputs:
    inputs: Any  # a tensor, tuple or dict of tensors, one row per sample
    ids: list[str]
    labels: torch.Tensor | None = None


def read_inputs(path: Path, signature: InputSignature, *, feature_names: list[str] | None,
                target_name: str | None, classes: list[str] | None = None) -> RawInputs:
    """The samples in ``path`` as the model's inputs (not yet normalised)."""
    if path.is_dir():
        return read_image_folder(path, signature)
    if not path.is_file():
        raise DataError(f"input {str(path)!r} does not exist",
                        hint="pass a .csv, .npz or .pt file, or a folder of images")
    if path.suffix == ".csv":
        return read_feature_csv(path, signature, feature_names=feature_names, target_name=target_name,
                                classes=classes)
    if path.suffix in (".npz", ".pt"):
        return read_array_file(path, signature, target_name=target_name)
    raise DataError(f"cannot read inputs from {path.name}",
                    hint="predict reads a .csv (one column per feature), an .npz, a .pt (weights_only) "
                         "or a folder of images")


def read_feature_csv(path: Path, signature: InputSignature, *, feature_names: list[str] | None,
                     target_name: str | None, classes: list[str] | None = None) -> RawInputs:
    """A CSV with one column per feature. With a header, columns are taken by name (the order
    in the file does not matter, other columns are ignored and the target column, when there,
    gives the labels: class indices, or the run's class names); without one, there must be
    exactly one column per feature."""
    if signature.structure != "tensor" or len(signature.tensors[0].shape) != 2:
        raise DataError(f"a CSV holds one row of features per sample; this model takes {signature.describe()}",
                        hint="pass an .npz or .pt file holding the inputs by name")
    expected = signature.tensors[0].shape[1]
    with path.open(newline="") as handle:
        rows = [row for row in csv.reader(handle) if row]
    if not rows:
        raise DataError(f"{path} is empty", hint="one row per sample, one column per feature")
    has_header = any(not _is_number(cell) for cell in rows[0])
    header = [cell.strip() for cell in rows[0]] if has_header else None
    body = rows[1:] if has_header else rows
    labels_at = None
    if header is not None and feature_names and all(name in header for name in feature_names):
        columns = [header.index(name) for name in feature_names]
        labels_at = header.index(target_name) if target_name in header else None
    elif (len(header) if header else len(rows[0])) == expected:
        columns = list(range(expected))
    else:
        count = len(header) if header else len(rows[0])
        names = _names(feature_names)
        raise DataError(f"{path} has {count} columns; the model expects {expected} features{names}",
                        hint="give a header row naming the feature columns (other columns are ignored), or "
                             "exactly one column per feature")
    values = np.empty((len(body), len(columns)), dtype=np.float64)
    labels = []
    for line, row in enumerate(body, start=2 if has_header else 1):
        try:
            values[line - (2 if has_header else 1)] = [float(row[i]) for i in columns]
            if labels_at is not None:
                labels.append(row[labels_at].strip())
        except (ValueError, IndexError):
            raise DataError(f"{path} line {line} is not {len(columns)} numbers in the feature columns",
                            hint="every row needs a number in every feature column") from None
    x = torch.from_numpy(values).to(torch.float32)
    label_tensor = _label_tensor(labels, classes) if labels_at is not None else None
    return RawInputs(inputs=x, ids=[str(i) for i in range(len(body))], labels=label_tensor)


def _label_tensor(cells: list[str], classes: list[str] | None) -> torch.Tensor | None:
    """Numbers as they are; text labels through the run's class names (None when a label is
    not one of them: accuracy is then not reported)."""
    if all(_is_number(cell) for cell in cells):
        return torch.tensor([float(cell) for cell in cells])
    if classes is None or not set(cells) <= set(classes):
        return None
    index = {name: i for i, name in enumerate(classes)}
    return torch.tensor([index[cell] for cell in cells])


def read_array_file(path: Path, signature: InputSignature, *, target_name: str | None) -> RawInputs:
    """An ``.npz`` (no pickle) or a ``.pt`` (weights_only): one array, or arrays named like the
    model's inputs (``x`` is accepted for a single input); ``y`` or the target name gives labels."""
    if path.suffix == ".npz":
        check_npz(path)
    try:
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                arrays: Any = {key: torch.from_numpy(archive[key]) for key in archive.files}
        else:
            arrays = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # numpy and torch raise many types for a bad file
        raise DataError(f"cannot read {path}: {err}", hint="an .npz from np.savez, or a .pt from torch.save "
                                                             "of a tensor or a dict of tensors") from None
    if isinstance(arrays, torch.Tensor):
        arrays = {signature.names[0]: arrays}
    if not isinstance(arrays, dict):
        raise DataError(f"{path} holds a {type(arrays).__name__}", hint="save a tensor or a dict of tensors")
    names = signature.names
    if signature.structure == "tensor" and names[0] not in arrays:
        candidates = [k for k in arrays if k not in ("y", target_name)]
        if "x" in arrays or len(candidates) == 1:
            arrays = {**arrays, names[0]: arrays["x"] if "x" in arrays else arrays[candidates[0]]}
    missing = [name for name in names if name not in arrays]
    if missing:
        raise DataError(f"{path} has no array named {missing[0]!r}; it holds {sorted(arrays)}",
                        hint=f"the model takes {signature.describe()}: save the arrays under those names")
    tensors = [torch.as_tensor(arrays[name]) for name in names]
    labels = next((torch.as_tensor(arrays[key]) for key in ("y", target_name) if key and key in arrays), None)
    count = len(tensors[0])
    return RawInputs(inputs=signature.rebuild(tensors), ids=[str(i) for i in range(count)], labels=labels)


def check_npz(path: Path) -> None:
    """Refuse an ``.npz`` before loading it when its arrays, by the shapes and dtypes their headers
    declare, would take more than the input limit (a small file can inflate to gigabytes), or
    when a member's data is not what its header declares."""
    import zipfile

    from torchwise.runs.safe_io import limit

    cap = limit("TORCHWISE_MAX_INPUT_BYTES")
    total = 0
    try:
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                with archive.open(member) as stream:
                    version = np.lib.format.read_magic(stream)
                    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                                   else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = read_header(stream)
                declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
                total += max(declared, member.file_size)
                if total > cap:
                    raise DataError(f"{path} declares {total} bytes of arrays (array {member.filename!r}: shape "
                                    f"{list(shape)[:6]}, {dtype}), over the {cap}-byte input limit",
                                    hint="split the inputs into smaller files, or raise TORCHWISE_MAX_INPUT_BYTES "
                                         "if the file is genuine")
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as err:
        raise DataError(f"cannot read {path}: {err}", hint="an .npz from np.savez, with no pickled objects") from None


def read_image_folder(path: Path, signature: InputSignature) -> RawInputs:
    """Every image file in the folder (sorted by name) as pixel values 0..255, [channels, height,
    width], flattened when the model takes flat features. Pillow reads them (matplotlib, a core
    dependency, brings it; the vision extra too)."""
    from PIL import Image

    if signature.structure != "tensor":
        raise DataError(f"an image folder gives one image per sample; this model takes {signature.describe()}",
                        hint="pass an .npz or .pt file holding the inputs by name")
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise DataError(f"{path} holds no images ({', '.join(IMAGE_SUFFIXES)})", hint="point at a folder of images")
    shape = signature.tensors[0].shape[1:]
    channels = shape[0] if len(shape) == 3 else 1
    images = []
    for file in files:
        with Image.open(file) as image:
            pixels = np.asarray(image.convert("L" if channels == 1 else "RGB"))
        images.append(torch.from_numpy(pixels.copy()).reshape(*pixels.shape[:2], -1).permute(2, 0, 1))
    sizes = sorted({tuple(image.shape) for image in images})
    if len(sizes) > 1:
        raise DataError(f"the images in {path} differ in size (channels, height, width): {sizes[:3]}",
                        hint="resize them to the size the model was trained on")
    x = torch.stack(images)
    if len(shape) == 1:
        x = x.flatten(1)
    return RawInputs(inputs=x, ids=[file.name for file in files])


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _names(feature_names: list[str] | None) -> str:
    if not feature_names:
        return ""
    shown = ", ".join(feature_names[:3]) + (f", ..., {feature_names[-1]}" if len(feature_names) > 3 else "")
    return f" ({shown})"
