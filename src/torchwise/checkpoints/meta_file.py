"""meta.json of a checkpoint: its format, its self-checksum, and the tensor files it vouches for.

meta.json is written in one canonical JSON form with its own sha256 inside, so any edit, even
of whitespace, is caught on read; it records the sha256 and size of both tensor files, which
`check_tensor_files` compares before a byte of them is loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

import torchwise
from torchwise.checkpoints.checkpoint_folder import META_FILE
from torchwise.checkpoints.tensor_file import sha256_file
from torchwise.errors import CheckpointError

FORMAT = "torchwise-checkpoint"
FORMAT_VERSION = 1
MODEL_FILE = "model.safetensors"
STATE_FILE = "state.safetensors"
TENSOR_FILES = (MODEL_FILE, STATE_FILE)  # integrity.py names them too (it must not import torch)
FILE_FIELDS = ("sha256", "size")  # what meta.json records of each tensor file
RESERVED = frozenset(
    {
        "meta_sha256",
        "format",
        "format_version",
        "torchwise_version",
        "torch_version",
        "files",
        "model_aliases",
        "training_state",
    }
)
HINT_CORRUPT = (
    "the checkpoint was cut off or corrupted; resume from checkpoints/best or another checkpoint, or start over"
)


def meta_document(meta: Mapping[str, Any], *, aliases: dict[str, str], skeleton: Any) -> dict[str, Any]:
    clash = sorted(RESERVED.intersection(meta))
    if clash:
        raise CheckpointError(
            f"checkpoint meta may not use the reserved keys {clash}",
            hint=f"rename them; reserved: {sorted(RESERVED)}",
        )
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "torchwise_version": torchwise.__version__,
        "torch_version": torch.__version__,
        **meta,
        "model_aliases": aliases,
        "training_state": skeleton,
    }


def canonical(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, indent=1, ensure_ascii=True, allow_nan=False) + "\n").encode()


def write_meta(path: Path, document: dict[str, Any]) -> None:
    try:
        body = canonical(document)
    except (TypeError, ValueError) as error:
        raise CheckpointError(
            f"checkpoint meta is not plain JSON: {error}",
            hint="meta holds str, int, finite float, bool, None, list and "
            "dict with str keys; put tensors in training_state",
        ) from None
    sealed = {"meta_sha256": hashlib.sha256(body).hexdigest(), **document}
    with open(path, "wb") as file:
        file.write(canonical(sealed))
        file.flush()
        os.fsync(file.fileno())


def read_meta_file(path: Path) -> dict[str, Any]:
    from torchwise.runs.safe_io import FolderFileError, read_bytes

    try:
        raw = read_bytes(path)  # no link followed, a regular file, size-limited
    except FolderFileError as error:
        raise CheckpointError(error.message, hint=HINT_CORRUPT) from None
    except OSError as error:
        raise CheckpointError(f"cannot read {path}: {error.strerror}", hint=HINT_CORRUPT) from None
    try:
        document = json.loads(raw.decode("utf-8"))
        # Byte-exact canonical form and self-checksum: no edit, even whitespace, goes unseen.
        in_form = type(document) is dict and canonical(document) == raw
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise CheckpointError(f"{path} is not valid JSON", hint=HINT_CORRUPT) from None
    if not in_form:
        raise CheckpointError(f"{path} is not in the form torchwise writes", hint=HINT_CORRUPT)
    claimed = document.pop("meta_sha256", None)
    if claimed != hashlib.sha256(canonical(document)).hexdigest():
        raise CheckpointError(f"{path} fails its checksum: it was edited or corrupted", hint=HINT_CORRUPT)
    if document.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a torchwise checkpoint", hint="point to a checkpoint folder")
    version = document.get("format_version")
    if type(version) is int and version > FORMAT_VERSION:
        raise CheckpointError(
            f"{path} has checkpoint format {version}; this torchwise reads format {FORMAT_VERSION}",
            hint=f"upgrade torchwise to the version that wrote it ({document.get('torchwise_version')!r})",
        )
    if type(version) is not int or version != FORMAT_VERSION:
        raise CheckpointError(f"{path} has an unknown format version {version!r}", hint=HINT_CORRUPT)
    if "training_state" not in document:
        raise CheckpointError(f"{path} has no training_state", hint=HINT_CORRUPT)
    return document


def check_tensor_files(path: Path, document: dict[str, Any]) -> None:
    files = document.get("files")
    if type(files) is not dict or set(files) != set(TENSOR_FILES):
        raise CheckpointError(f"{path / META_FILE} does not list the tensor files", hint=HINT_CORRUPT)
    for file_name in TENSOR_FILES:
        expected, file_path = files[file_name], path / file_name
        if type(expected) is not dict or [type(expected.get(k)) for k in FILE_FIELDS] != [
            str,
            int,
        ]:
            raise CheckpointError(f"{path / META_FILE} has no checksum for {file_name}", hint=HINT_CORRUPT)
        try:
            size = regular_size(file_path)
            digest = sha256_file(file_path) if size == expected["size"] else None
        except FileNotFoundError:
            raise CheckpointError(f"{file_path} is missing", hint=HINT_CORRUPT) from None
        except OSError as error:
            raise CheckpointError(f"cannot read {file_path}: {error}", hint=HINT_CORRUPT) from None
        if size != expected["size"]:
            raise CheckpointError(
                f"{file_path} has {size} bytes where {expected['size']} were written: it was cut off or overwritten",
                hint=HINT_CORRUPT,
            )
        if digest != expected["sha256"]:
            raise CheckpointError(
                f"{file_path} fails its sha256 checksum: its bytes changed since it was written",
                hint=HINT_CORRUPT,
            )


def regular_size(path: Path) -> int:
    """The size of a tensor file, which must be a regular file and not a link (a FIFO or
    ``/dev/zero`` in its place would hang or never end a read)."""
    from torchwise.runs.safe_io import FolderFileError, open_regular

    try:
        fd = open_regular(path)
    except FolderFileError as error:
        raise CheckpointError(error.message, hint=HINT_CORRUPT) from None
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)
