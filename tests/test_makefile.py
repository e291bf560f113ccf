"""The Makefile's set-up installs the CPU build of torch where there is no NVIDIA GPU, from
TORCH_SPEC with TORCH_INDEX_URL as an extra index, and both can be overridden (dry runs: `make -n`
prints the commands without running them)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def dry_run(tmp_path: Path, *variables: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    venv = tmp_path / "venv"
    out = subprocess.run(["make", "-n", f"VENV={venv}", *variables, f"{venv}/.torchwise-installed"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout


def test_the_default_pin_uses_the_pytorch_cpu_index_as_an_extra_index(tmp_path):
    out = dry_run(tmp_path)
    assert ('pip install -q --no-deps "torch==2.13.0" --extra-index-url "https://download.pytorch.org/whl/cpu"'
            in out)
    assert 'pip install -q -e ".[datasets,dev,docs,' in out  # the docs extra, for make docs in CI


def test_the_torch_spec_and_index_can_be_overridden(tmp_path):
    out = dry_run(tmp_path, "TORCH_SPEC=torch==2.6.0", "TORCH_INDEX_URL=file:///srv/wheels")
    assert 'pip install -q --no-deps "torch==2.6.0" --extra-index-url "file:///srv/wheels"' in out
