"""``doctor()``: run every check in order and gather the findings and a bug-report block.

>>> from torchwise.env import doctor
>>> report = doctor()                                  # doctest: +SKIP
>>> report.by_id("smoke-autograd").level               # doctest: +SKIP
'ok'
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchwise.env import gpu, packages, smoke, system, threads
from torchwise.env.compat import format_version
from torchwise.env.findings import DoctorReport, Finding
from torchwise.env.probe import Facts, gather, installed_version

# JSON schema of DoctorReport.to_json(), i.e. of `torchwise doctor --json`.
SCHEMA_PATH = Path(__file__).with_name("doctor.schema.json")


@dataclass(frozen=True)
class Check:
    id: str
    run: Callable[[Facts], Finding]
    needs_torch: bool = True


# The order of the table: the install, the GPU, real work, then the machine around it.
CHECKS: list[Check] = [
    Check("python", packages.check_python, needs_torch=False),
    Check("torch-import", packages.check_torch_import, needs_torch=False),
    Check("torch-cpu-build-with-gpu", gpu.check_cpu_build_with_gpu),
    Check("driver-too-old", gpu.check_driver_too_old),
    Check("gpu-arch-unsupported", gpu.check_gpu_arch),
    Check("cuda-unavailable", gpu.check_cuda_unavailable),
    Check("torchvision-mismatch", packages.check_torchvision),
    Check("torchaudio-mismatch", packages.check_torchaudio),
    Check("smoke-matmul", smoke.check_smoke_matmul),
    Check("smoke-autograd", smoke.check_smoke_autograd),
    Check("bf16", smoke.check_bf16),
    Check("tf32", smoke.check_tf32),
    Check("amp", smoke.check_amp),
    Check("compile-toolchain", smoke.check_compile_toolchain),
    Check("dataloader-workers", system.check_dataloader_workers),
    Check("cpu-threads", threads.check_cpu_threads),
    Check("shm-size", system.check_shm_size, needs_torch=False),
    Check("open-files", system.check_open_files, needs_torch=False),
    Check("mps", gpu.check_mps),
    Check("gpu-count", gpu.check_gpu_count),
    Check("nccl", gpu.check_nccl),
    Check("disk-space", system.check_disk_space, needs_torch=False),
    Check("memory", system.check_memory, needs_torch=False),
]


def run_check(check: Check, facts: Facts) -> Finding:
    """One check; a check that crashes becomes a warning instead of ending the doctor."""
    if check.needs_torch and facts.torch is None:
        return Finding(check.id, "info", "skipped: torch does not import")
    try:
        return check.run(facts)
    except Exception as err:  # noqa: BLE001 - a broken check must not hide the others
        return Finding(
            check.id,
            "warn",
            f"the check itself failed: {type(err).__name__}: {err}",
            fix="report this to torchwise together with the block below",
        )


def doctor(full: bool = False, *, runs_dir: Path | str = "runs") -> DoctorReport:
    """Check the install and the machine; ``full`` also runs a real ``torch.compile``.

    >>> report = doctor()                              # doctest: +SKIP
    >>> report.exit_code, report.by_id("python").level  # doctest: +SKIP
    (0, 'ok')
    """
    facts = gather(full=full, runs_dir=Path(runs_dir))
    findings = [run_check(check, facts) for check in CHECKS]
    return DoctorReport(findings=findings, report=build_report(facts))


def build_report(facts: Facts) -> dict[str, Any]:
    """The facts a maintainer asks for first, in the order they ask."""
    from torchwise import __version__

    report: dict[str, Any] = {
        "torchwise": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "executable": sys.executable,
        "cpu_count": os.cpu_count(),
    }
    torch = facts.torch
    if torch is None:
        report["torch"] = None
        report["torch_error"] = facts.torch_error
    else:
        report["torch"] = torch.__version__
        report["torch_build"] = packages.build_flavour(torch)
        report["cuda_available"] = bool(torch.cuda.is_available())
        report["cudnn"] = torch.backends.cudnn.version() if torch.cuda.is_available() else None
        report["start_method"] = torch.multiprocessing.get_start_method(allow_none=False)
    smi = facts.smi
    report["driver"] = smi.driver_version if smi else None
    report["driver_cuda"] = format_version(smi.cuda) if smi and smi.cuda else None
    report["driver_error"] = smi.error if smi else None
    report["gpus"] = [
        gpu.name + (f" (sm_{gpu.capability[0]}{gpu.capability[1]})" if gpu.capability else "")
        for gpu in (smi.gpus if smi else [])
    ]
    for package in ("torchvision", "torchaudio"):
        report[package] = installed_version(package)
    return report
