"""What a run folder held before a resume, so that a refused resume can leave it as it was.

A resume writes into the run folder before it knows whether it can go on (the summary says
``running``, the environment and data statistics are refreshed, events are appended); a
resume refused after that must not leave a finished run marked ``failed``. Only the folder's
own files are taken (the checkpoints are not written before the first step): the logs by
length, since they only grow, the documents torchwise writes by content (each read through
`safe_io`, so a planted link or FIFO is refused and a file over the snapshot limit is too);
anything else in the folder is not torchwise's, is not read, and is left where it is.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "summary.json").write_text('{"status": "completed"}')
>>> _ = (folder / "events.jsonl").write_text('{"event": "early_stop"}\\n')
>>> before = take_snapshot(folder)
>>> _ = (folder / "summary.json").write_text('{"status": "failed"}')
>>> with (folder / "events.jsonl").open("a") as events:
...     _ = events.write('{"event": "failed"}\\n')
>>> (folder / "env.json").touch()
>>> restore_snapshot(before)
>>> sorted(p.name for p in folder.iterdir()), (folder / "summary.json").read_text()
(['events.jsonl', 'summary.json'], '{"status": "completed"}')
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

APPEND_ONLY = (".jsonl",)
# The top-level documents a run writes; only these are kept by content.
OWNED = ("config.yaml", "summary.json", "env.json", "model.json", "data_stats.json", "facts.json", "diagnosis.json",
         "signature.json", "metrics.jsonl", "events.jsonl")


@dataclass
class FolderSnapshot:
    path: Path
    names: set[str] = field(default_factory=set)  # every top-level entry
    sizes: dict[str, int] = field(default_factory=dict)  # append-only logs: their length
    contents: dict[str, bytes] = field(default_factory=dict)  # other top-level files


def take_snapshot(path: Path) -> FolderSnapshot:
    from torchwise.runs.safe_io import open_regular, read_bytes

    snapshot = FolderSnapshot(path=path)
    for entry in path.iterdir():
        snapshot.names.add(entry.name)
        if entry.name not in OWNED or not (entry.is_file() or entry.is_symlink()):
            continue
        if entry.name.endswith(APPEND_ONLY):
            fd = open_regular(entry)
            snapshot.sizes[entry.name] = os.fstat(fd).st_size
            os.close(fd)
        else:
            snapshot.contents[entry.name] = read_bytes(entry, variable="TORCHWISE_MAX_SNAPSHOT_BYTES")
    return snapshot


def restore_snapshot(snapshot: FolderSnapshot) -> None:
    """Put back what `take_snapshot` saw: new top-level entries go, changed files come back."""
    for entry in snapshot.path.iterdir():
        if entry.name in snapshot.names:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    from torchwise.runs.safe_io import open_regular, write_bytes_atomic

    for name, size in snapshot.sizes.items():
        try:
            fd = open_regular(snapshot.path / name, os.O_WRONLY)
        except FileNotFoundError:
            continue
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)
    for name, content in snapshot.contents.items():
        write_bytes_atomic(snapshot.path / name, content)
