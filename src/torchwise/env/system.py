"""Checks on the machine around torch: DataLoader workers, shared memory, file limits, disk, RAM."""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path
from types import ModuleType

from torchwise.env.findings import Finding
from torchwise.env.probe import Facts

GIB = 1024**3
MIB = 1024**2
SHM_PATH = Path("/dev/shm")
SHM_WARN_BYTES = 1 * GIB
OPEN_FILES_WARN = 1024
DISK_WARN_BYTES = 5 * GIB
DISK_FAIL_BYTES = 1 * GIB
MEMORY_WARN_BYTES = 2 * GIB
LOADER_TIMEOUT_S = 30


def _size(n_bytes: float) -> str:
    return f"{n_bytes / GIB:.1f} GiB" if n_bytes >= GIB else f"{n_bytes / MIB:.0f} MiB"


class _Squares:
    """A map-style dataset defined at module level so spawn/forkserver workers can import it."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> int:
        return index * index


def run_loader(torch: ModuleType, num_workers: int) -> list[int]:
    loader = torch.utils.data.DataLoader(
        _Squares(), batch_size=2, num_workers=num_workers, timeout=LOADER_TIMEOUT_S
    )
    return [int(value) for batch in loader for value in batch]


def check_dataloader_workers(facts: Facts) -> Finding:
    torch = facts.torch
    assert torch is not None
    method = torch.multiprocessing.get_start_method(allow_none=False)
    try:
        values = run_loader(torch, num_workers=2)
    except Exception as err:  # noqa: BLE001 - any failure here is the finding
        # here, not at the top: explain reads env.compat, so env importing it is a cycle
        from torchwise.explain.lookup import explain

        message = f"{type(err).__name__}: {err}"
        explanation = explain(message)
        return Finding(
            "dataloader-workers",
            "fail",
            f"a 2-worker DataLoader ({method}) failed: {message}",
            detail=explanation.cause if explanation else "",
            fix=explanation.fix if explanation else "use num_workers=0 and report the error above",
        )
    expected = [index * index for index in range(len(_Squares()))]
    if values != expected:
        return Finding(
            "dataloader-workers",
            "fail",
            f"a 2-worker DataLoader ({method}) returned {values}",
            detail=f"expected {expected}",
        )
    return Finding(
        "dataloader-workers", "ok", f"a 2-worker DataLoader runs (start method {method})"
    )


def shm_size_bytes() -> int | None:
    """Total size of /dev/shm, where DataLoader workers put batches; None where there is none."""
    try:
        stats = os.statvfs(SHM_PATH)
    except (OSError, AttributeError):
        return None
    return stats.f_blocks * stats.f_frsize


def check_shm_size(facts: Facts) -> Finding:
    if platform.system() != "Linux":
        return Finding("shm-size", "info", f"{platform.system()}: no /dev/shm to check")
    size = shm_size_bytes()
    if size is None:
        return Finding(
            "shm-size",
            "warn",
            "/dev/shm is missing: DataLoader workers cannot share batches",
            fix="mount a tmpfs at /dev/shm, or use num_workers=0",
        )
    if size >= SHM_WARN_BYTES:
        return Finding("shm-size", "ok", f"/dev/shm is {_size(size)}")
    return Finding(
        "shm-size",
        "warn",
        f"/dev/shm is only {_size(size)}",
        detail=(
            "DataLoader workers hand batches over through /dev/shm; when it is full they die"
            " with 'DataLoader worker (pid N) is killed by signal: Bus error'. 64 MiB is the"
            " Docker default."
        ),
        fix=(
            "docker run --shm-size=8g ... (or --ipc=host); in Kubernetes mount an emptyDir"
            " with medium: Memory at /dev/shm"
        ),
    )


def open_files_limit() -> int | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft


def check_open_files(facts: Facts) -> Finding:
    limit = open_files_limit()
    if limit is None:
        return Finding("open-files", "info", "no open-files limit on this platform")
    if limit == -1 or limit >= OPEN_FILES_WARN:
        shown = "unlimited" if limit == -1 else str(limit)
        return Finding("open-files", "ok", f"open-files limit {shown}")
    return Finding(
        "open-files",
        "warn",
        f"open-files limit is {limit}",
        detail=(
            "Workers share tensors through file descriptors; a low limit ends in 'Too many"
            " open files' or 'received 0 items of ancdata'."
        ),
        fix="ulimit -n 4096  (or torch.multiprocessing.set_sharing_strategy('file_system'))",
    )


def _existing(path: Path) -> Path:
    path = path.resolve()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_disk_space(facts: Facts) -> Finding:
    where = _existing(facts.runs_dir)
    free = shutil.disk_usage(where).free
    summary = f"{_size(free)} free at {where}"
    if free >= DISK_WARN_BYTES:
        return Finding("disk-space", "ok", summary)
    return Finding(
        "disk-space",
        "fail" if free < DISK_FAIL_BYTES else "warn",
        summary,
        detail="Checkpoints of a mid-sized model take hundreds of MiB each.",
        fix="free space on that disk, or write runs elsewhere (--run-dir /path/with/space)",
    )


def memory_bytes() -> tuple[int, int | None] | None:
    """(total, available) RAM in bytes; available is None where the OS does not say."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return total, None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            return total, int(line.split()[1]) * 1024
    return total, None


def check_memory(facts: Facts) -> Finding:
    memory = memory_bytes()
    if memory is None:
        return Finding("memory", "info", "RAM size unknown on this platform")
    total, available = memory
    summary = f"{_size(total)} RAM" + (f", {_size(available)} available" if available else "")
    if available is None or available >= MEMORY_WARN_BYTES:
        return Finding("memory", "ok", summary)
    return Finding(
        "memory",
        "warn",
        summary,
        detail="Each DataLoader worker holds a copy of the dataset object; training may be killed.",
        fix="close other programs, use fewer DataLoader workers, or load data lazily from disk",
    )
