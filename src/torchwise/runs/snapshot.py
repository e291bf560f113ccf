"""What a run folder held before a resume, so that a refused resume can leave it as it was.

A resume writes into the run folder before it knows whether it can go on (the summary says
``running``, the environment and data statistics are refreshed, events are appended); a
resume refused after that must not leave a finished run marked ``failed``. Only the folder's
own files are taken (the checkpoints are not written before the first step): the logs by
length, since they only grow, everything else by content.

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


@dataclass
class FolderSnapshot:
    path: Path
    names: set[str] = field(default_factory=set)  # every top-level entry
    sizes: dict[str, int] = field(default_factory=dict)  # append-only logs: their length
    contents: dict[str, bytes] = field(default_factory=dict)  # other top-level files


def take_snapshot(path: Path) -> FolderSnapshot:
    snapshot = FolderSnapshot(path=path)
    for entry in path.iterdir():
        snapshot.names.add(entry.name)
        if entry.is_file() and not entry.is_symlink():
            if entry.name.endswith(APPEND_ONLY):
                snapshot.sizes[entry.name] = entry.stat().st_size
            else:
                snapshot.contents[entry.name] = entry.read_bytes()
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
    for name, size in snapshot.sizes.items():
        if (snapshot.path / name).is_file():
            with (snapshot.path / name).open("r+b") as log:
                log.truncate(size)
    for name, content in snapshot.contents.items():
        target = snapshot.path / name
        if not target.is_file() or target.read_bytes() != content:
            tmp = target.with_name(f".{name}.restore-{os.getpid()}")
            tmp.write_bytes(content)
            os.replace(tmp, target)
