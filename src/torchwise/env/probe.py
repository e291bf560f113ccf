"""Facts the checks share, gathered once: does torch import, what does ``nvidia-smi`` say.

``nvidia-smi`` is asked twice: its plain output carries the highest CUDA version the driver
supports (only the header shows it), and ``--query-gpu`` gives each GPU's compute capability.

>>> header = "| NVIDIA-SMI 550.54.14    Driver Version: 550.54.14    CUDA Version: 12.4 |"
>>> parse_smi_header(header)
('550.54.14', (12, 4))
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from torchwise.env.compat import Version, parse_version

SMI_TIMEOUT_S = 10


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    capability: Version | None = None
    memory_mib: int | None = None


@dataclass(frozen=True)
class Smi:
    """What the NVIDIA driver reports; ``cuda`` is the newest CUDA it can run. ``error`` is
    set when nvidia-smi is installed but fails, a sign of a driver that is not loaded."""

    driver_version: str | None
    cuda: Version | None
    gpus: list[Gpu] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True)
class Facts:
    """Shared input of every check; ``torch`` is None when it does not import (``torch_error``)."""

    torch: ModuleType | None
    torch_error: str | None
    smi: Smi | None
    full: bool = False
    runs_dir: Path = Path("runs")


def parse_smi_header(text: str) -> tuple[str | None, Version | None]:
    driver = re.search(r"Driver Version:\s*([\d.]+)", text)
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", text)
    return (
        driver.group(1) if driver else None,
        parse_version(cuda.group(1))[:2] if cuda else None,
    )


def parse_smi_query(text: str) -> list[Gpu]:
    """Rows of ``index, name, compute_cap, memory.total`` (MiB, no units) as printed by
    ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits``."""
    gpus = []
    for line in text.strip().splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) < 2 or not cells[0].isdigit():
            continue
        capability = _capability(cells[2]) if len(cells) > 2 else None
        memory = int(float(cells[3])) if len(cells) > 3 and _is_number(cells[3]) else None
        gpus.append(Gpu(int(cells[0]), cells[1], capability, memory))
    return gpus


def _capability(cell: str) -> Version | None:
    match = re.fullmatch(r"(\d+)\.(\d+)", cell)  # "[N/A]" on drivers that cannot tell
    return (int(match.group(1)), int(match.group(2))) if match else None


def _is_number(cell: str) -> bool:
    return re.fullmatch(r"\d+(\.\d+)?", cell) is not None


def _run(args: list[str]) -> tuple[bool, str]:
    """(succeeded, output): stdout on success, else what it said (nvidia-smi errors on stdout)."""
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=SMI_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as err:
        return False, str(err)
    if done.returncode == 0:
        return True, done.stdout
    return False, (done.stdout + done.stderr).strip() or f"exit code {done.returncode}"


def probe_smi() -> Smi | None:
    """None when ``nvidia-smi`` is not installed; an ``Smi`` with ``error`` set when it is but
    fails (the driver is not loaded, or cannot talk to the GPU)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    ok, header = _run([smi])
    if not ok:
        return Smi(driver_version=None, cuda=None, error=header.splitlines()[0])
    driver, cuda = parse_smi_header(header)
    fields = "index,name,compute_cap,memory.total"
    ok, rows = _run([smi, f"--query-gpu={fields}", "--format=csv,noheader,nounits"])
    if not ok:  # drivers before 510 do not know compute_cap
        ok, rows = _run([smi, "--query-gpu=index,name", "--format=csv,noheader,nounits"])
    return Smi(driver_version=driver, cuda=cuda, gpus=parse_smi_query(rows if ok else ""))


def probe_torch() -> tuple[ModuleType | None, str | None]:
    try:
        return importlib.import_module("torch"), None
    except Exception as err:  # noqa: BLE001 - any failure to import is the finding
        return None, f"{type(err).__name__}: {err}"


def installed_version(distribution: str) -> str | None:
    """The installed version of a package, without importing it (None when absent)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def gather(*, full: bool = False, runs_dir: Path = Path("runs")) -> Facts:
    torch, torch_error = probe_torch()
    return Facts(
        torch=torch, torch_error=torch_error, smi=probe_smi(), full=full, runs_dir=runs_dir
    )
