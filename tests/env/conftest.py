"""Fakes for simulating broken installs on a CPU machine: an ``nvidia-smi`` on PATH and a torch
whose build attributes say what the test needs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import torch

from torchwise.env.probe import Facts, probe_smi

HEADER = """\
Mon Nov 30 13:37:39 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI {driver:<22} Driver Version: {driver:<14} CUDA Version: {cuda:<9}|
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|=========================================+========================+======================|
{rows}
+-----------------------------------------+------------------------+----------------------+
"""
ROW = (
    "|   {index}  {name:<30} Off |   00000000:0{index}:00.0 Off |                  Off |\n"
    "|  0%   38C    P8             19W /  450W |       1MiB / {memory:>6}MiB |"
    "      0%      Default |"
)


def write_fake_smi(
    folder: Path, *, driver: str, cuda: str, gpus: list[tuple[str, str, int]]
) -> Path:
    """An executable ``nvidia-smi`` answering the plain call and ``--query-gpu`` like the real one.
    ``gpus``: (name, compute capability, memory MiB)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = "\n".join(
        ROW.format(index=i, name=name, memory=memory) for i, (name, _, memory) in enumerate(gpus)
    )
    query = "\n".join(f"{i}, {name}, {cap}, {memory}" for i, (name, cap, memory) in enumerate(gpus))
    script = folder / "nvidia-smi"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        f"  *--query-gpu*) cat <<'EOF'\n{query}\nEOF\n  ;;\n"
        f"  *) cat <<'EOF'\n{HEADER.format(driver=driver, cuda=cuda, rows=rows)}EOF\n  ;;\n"
        "esac\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


@pytest.fixture
def fake_smi(tmp_path, monkeypatch):
    """Install a fake nvidia-smi first on PATH; returns the parsed ``Smi`` it produces."""

    def install(*, driver: str, cuda: str, gpus: list[tuple[str, str, int]]):
        folder = tmp_path / "fake-bin"
        write_fake_smi(folder, driver=driver, cuda=cuda, gpus=gpus)
        monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
        return probe_smi()

    return install


@pytest.fixture
def torch_build(monkeypatch):
    """Make the installed torch look like another build: version, CUDA, arch list, devices."""

    def pretend(
        version: str,
        *,
        cuda: str | None = None,
        arch_list: list[str] | None = None,
        available: bool = False,
        devices: list[tuple[str, tuple[int, int]]] | None = None,
        bf16: bool = False,
    ) -> None:
        devices = devices or []
        monkeypatch.setattr(torch, "__version__", version)
        monkeypatch.setattr(torch.version, "cuda", cuda)
        monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: list(arch_list or []))
        flags = " ".join(arch_list or []) or None
        monkeypatch.setattr(torch._C, "_cuda_getArchFlags", lambda: flags, raising=False)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: len(devices))
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: devices[i][0])
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda i=0: devices[i][1])
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: bf16)

    return pretend


@pytest.fixture
def make_facts():
    """Facts around the real (possibly disguised) torch and the given nvidia-smi answer."""

    def make(smi=None, *, full: bool = False, runs_dir: Path = Path("runs")) -> Facts:
        return Facts(torch=torch, torch_error=None, smi=smi, full=full, runs_dir=runs_dir)

    return make


DRIVER_NOT_LOADED = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure"
    " that the latest NVIDIA driver is installed and running."
)


@pytest.fixture
def failing_smi(tmp_path, monkeypatch):
    """An nvidia-smi that fails the way it does when the driver module is not loaded."""
    folder = tmp_path / "broken-bin"
    folder.mkdir()
    script = folder / "nvidia-smi"
    script.write_text(f'#!/bin/sh\necho "{DRIVER_NOT_LOADED}"\nexit 9\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return probe_smi()
