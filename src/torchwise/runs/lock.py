"""The run lock: one process writes a run folder, and the OS says whether it is still alive.

A training process holds an exclusive ``flock`` on ``RUN_DIR/.lock`` for its whole life. The
kernel drops the lock when the process exits for any reason, SIGKILL and power-cut included
(a lock is never left behind, unlike a pid file), so a reader can tell a run that is training
from one whose process died while `summary.json` still says ``running``.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> lock = RunLock.acquire(folder)
>>> lock_held(folder)
True
>>> lock.release(); lock_held(folder)
False
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from torchwise.errors import RunLocked
from torchwise.runs.safe_io import open_lock, open_regular

LOCK_NAME = ".lock"


class RunLock:
    """An exclusive lock on a run folder, held until `release` or the process's end."""

    def __init__(self, path: Path, handle: int) -> None:
        self.path = path
        self._fd: int | None = handle

    @classmethod
    def acquire(cls, folder: Path) -> RunLock:
        """Take the folder's lock or raise `RunLocked` naming the process that holds it."""
        path = folder / LOCK_NAME
        fd = open_lock(path)  # not through a planted link, and a FIFO there does not block
        # A reader (`torchwise runs`) probes with a shared lock for an instant; try a few times
        # so that a probe at the wrong moment does not refuse a legitimate start.
        for attempt in range(5):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt == 4:
                    holder = _read_holder(fd)
                    os.close(fd)
                    raise RunLocked(
                        f"run folder {folder} is in use by another process{holder}",
                        hint="wait for that run to finish (or stop it with Ctrl-C / kill), then resume"
                        ) from None
                time.sleep(0.02)
        # Who holds it, for the error message of the next process (informative only: the lock
        # itself, not this text, is what decides).
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


def lock_held(folder: Path) -> bool:
    """True while some live process holds the folder's lock (a reader takes it for an instant)."""
    path = folder / LOCK_NAME
    try:
        fd = open_regular(path)  # a reader must not hang on a FIFO or write through a link
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the probe's shared lock
    return False


def check_free(folder: Path) -> None:
    """Raise `RunLocked` (as `RunLock.acquire` would) while another process holds the folder's lock,
    without taking it: every rank of a torchrun resume can ask before anything else is checked."""
    if lock_held(folder):
        try:
            fd = os.open(folder / LOCK_NAME, os.O_RDONLY)
        except OSError:
            holder = ""
        else:
            holder = _read_holder(fd)
            os.close(fd)
        raise RunLocked(f"run folder {folder} is in use by another process{holder}",
                        hint="wait for that run to finish (or stop it with Ctrl-C / kill), then resume")
