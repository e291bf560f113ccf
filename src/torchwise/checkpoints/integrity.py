"""A cheap look at a run's checkpoints for the readers (`runs`, `report`, `trust`): is each one whole?

`load_checkpoint` proves a checkpoint by its sha256 checksums, a full read of every tensor file.
A reader listing runs cannot afford that, but it can afford what catches a cut or swapped file:
``meta.json`` records each tensor file's size, so each file is checked to be a regular file
(not a link, FIFO or device) of exactly that size. A checkpoint that fails is *damaged*.

>>> import tempfile, torch
>>> from torchwise.checkpoints.checkpoint import save_checkpoint
>>> run = Path(tempfile.mkdtemp())
>>> save_checkpoint(run / "checkpoints" / "last", model_state={"w": torch.ones(4)}, training_state={}, meta={})
>>> [(row.name, row.state) for row in checkpoint_rows(run)]
[('last', 'ok')]
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from torchwise.errors import CheckpointError
from torchwise.runs.safe_io import FolderFileError, open_regular, read_json, sibling_link_target

# checkpoint.TENSOR_FILES, named here so that a reader listing runs does not import torch.
TENSOR_FILES = ("model.safetensors", "state.safetensors")


@dataclass(frozen=True)
class CheckpointRow:
    name: str
    step: int | None
    epoch: int | None
    size: int | None  # bytes of the tensor files and meta.json
    state: str  # "ok", or "damaged: <what>"

    @property
    def damaged(self) -> bool:
        return self.state != "ok"


def checkpoint_rows(run_dir: Path) -> list[CheckpointRow]:
    """One row per checkpoint under ``run_dir/checkpoints`` (hidden staging folders left out)."""
    folder = run_dir / "checkpoints"
    if folder.is_symlink():
        return [CheckpointRow("checkpoints", None, None, None, "damaged: checkpoints is a symbolic link")]
    if not folder.is_dir():
        return []
    return [inspect_checkpoint(entry) for entry in sorted(folder.iterdir()) if not entry.name.startswith(".")]


def inspect_checkpoint(entry: Path) -> CheckpointRow:
    """The row of one checkpoint (a link to a hidden sibling folder, or a plain folder)."""
    try:
        folder = sibling_link_target(entry) or entry
        meta = read_json(folder / "meta.json")  # its own checksum is load_checkpoint's to prove
    except (FileNotFoundError, NotADirectoryError):
        return CheckpointRow(entry.name, None, None, None, "damaged: no meta.json")
    except (FolderFileError, CheckpointError) as err:
        return CheckpointRow(entry.name, None, None, None, f"damaged: {err.message}")
    step, epoch = meta.get("step"), meta.get("epoch")
    step, epoch = (step if type(step) is int else None), (epoch if type(epoch) is int else None)
    files = meta.get("files") if isinstance(meta.get("files"), dict) else {}
    total = 0
    for name in TENSOR_FILES:
        expected = (files.get(name) or {}).get("size") if isinstance(files.get(name), dict) else None
        try:
            fd = open_regular(folder / name)
        except FileNotFoundError:
            return CheckpointRow(entry.name, step, epoch, None, f"damaged: {name} is missing")
        except FolderFileError as err:
            return CheckpointRow(entry.name, step, epoch, None, f"damaged: {err.message}")
        size = os.fstat(fd).st_size
        os.close(fd)
        if size != expected:
            return CheckpointRow(entry.name, step, epoch, None,
                                 f"damaged: {name} has {size} bytes where meta.json says {expected}")
        total += size
    return CheckpointRow(entry.name, step, epoch, total, "ok")


def damage(run_dir: Path) -> list[str]:
    """``"<checkpoint>: <what>"`` for each damaged checkpoint of the run; [] when all are whole."""
    return [f"{row.name}: {row.state.removeprefix('damaged: ')}" for row in checkpoint_rows(run_dir) if row.damaged]
