"""Checks on what is installed: Python, torch itself, and the companions built against it."""

from __future__ import annotations

import platform
import sys
from types import ModuleType

from torchwise.env import probe
from torchwise.env.compat import (
    WHEEL_INDEX,
    companion_version,
    local_tag,
    parse_version,
    public_version,
)
from torchwise.env.findings import Finding
from torchwise.env.probe import Facts

MIN_PYTHON = (3, 10)

SYMPTOMS = {
    "torchvision": '"operator torchvision::nms does not exist" or "Couldn\'t load custom C++ ops"',
    "torchaudio": '"undefined symbol" or "operator torchaudio::... does not exist" on import',
}


def python_version() -> tuple[int, int, int]:
    return sys.version_info[:3]


def build_flavour(torch: ModuleType) -> str:
    """``"cuda 12.4"``, ``"rocm 6.2"`` or ``"cpu"``: what the installed wheel was built for."""
    hip = getattr(torch.version, "hip", None)
    if hip:
        return f"rocm {hip}"
    if torch.version.cuda:
        return f"cuda {torch.version.cuda}"
    return "cpu"


def check_python(facts: Facts) -> Finding:
    version = ".".join(map(str, python_version()))
    summary = f"Python {version} ({platform.system()} {platform.machine()})"
    if python_version()[:2] < MIN_PYTHON:
        floor = ".".join(map(str, MIN_PYTHON))
        return Finding(
            "python",
            "fail",
            summary,
            detail=f"torchwise and current torch releases need Python {floor} or newer.",
            fix=f"create the environment with a newer Python: python{floor} -m venv .venv",
        )
    return Finding("python", "ok", summary, detail=f"{sys.executable} on {platform.platform()}")


def check_torch_import(facts: Facts) -> Finding:
    if facts.torch is None:
        error = facts.torch_error or "unknown error"
        return Finding(
            "torch-import",
            "fail",
            f"torch does not import ({error.splitlines()[0]})",
            detail=error + _import_hint(error),
            fix=f"{sys.executable} -m pip install --force-reinstall torch",
        )
    torch = facts.torch
    return Finding(
        "torch-import",
        "ok",
        f"torch {torch.__version__} ({build_flavour(torch)} build)",
        detail=f"torch.version.cuda = {torch.version.cuda}; installed at {torch.__file__}",
    )


def _import_hint(error: str) -> str:
    if "No module named" in error:
        return (
            "\ntorch is not installed for this Python. Install it with the same interpreter that"
            " runs your code (python -m pip, not a pip from another environment)."
        )
    if ".so" in error or ".dll" in error:
        return (
            "\nA shared library failed to load: usually two CUDA builds mixed in one"
            " environment (nvidia-* packages from another torch). Reinstall torch cleanly."
        )
    return ""


def _companion_check(facts: Facts, package: str) -> Finding:
    finding_id = f"{package}-mismatch"
    installed = probe.installed_version(package)
    if installed is None:
        return Finding(finding_id, "info", f"{package} is not installed")
    assert facts.torch is not None
    torch_version = facts.torch.__version__
    wanted = companion_version(package, torch_version)
    summary = f"{package} {installed} with torch {torch_version}"
    if wanted is None:
        return Finding(finding_id, "info", summary, detail="no known pair for this torch")
    torch_tag, companion_tag = local_tag(torch_version), local_tag(installed)
    same_release = parse_version(installed)[:2] == parse_version(wanted)
    same_flavour = not torch_tag or not companion_tag or torch_tag == companion_tag
    if same_release and same_flavour:
        return Finding(finding_id, "ok", summary)
    index = f" --index-url {WHEEL_INDEX}/{torch_tag}" if torch_tag else ""
    why = (
        f"torch {public_version(torch_version)} needs {package} {wanted}.x"
        if not same_release
        else f"torch is a +{torch_tag} build but {package} is +{companion_tag}"
    )
    return Finding(
        finding_id,
        "fail",
        f"{summary}: they do not belong together",
        detail=(
            f"{why}. {package}'s compiled operators are built against one torch release and"
            f" build; with another they fail to load, which shows up as {SYMPTOMS[package]}."
        ),
        fix=f'pip install --force-reinstall --no-deps "{package}=={wanted}.*"{index}',
    )


def check_torchvision(facts: Facts) -> Finding:
    return _companion_check(facts, "torchvision")


def check_torchaudio(facts: Facts) -> Finding:
    return _companion_check(facts, "torchaudio")
