"""Checks on the accelerator: the torch build against the driver and the GPUs, MPS, NCCL."""

from __future__ import annotations

import os
import platform
from types import ModuleType

from torchwise.env.compat import (
    MIN_DRIVER_FOR_CUDA,
    MINOR_COMPAT_MIN_DRIVER,
    WHEEL_INDEX,
    Version,
    arch_cuda_range,
    arch_list_covers,
    driver_runs_cuda,
    format_version,
    parse_version,
    pick_cuda_build,
    pip_install_torch,
)
from torchwise.env.findings import Finding
from torchwise.env.probe import Facts, Smi

NO_SMI = "no NVIDIA GPU (nvidia-smi not found)"
HIDDEN_VALUES = {"", "-1", "none", "void"}
CPU_INSTALL = f"pip install torch --index-url {WHEEL_INDEX}/cpu"


def _build_cuda(facts: Facts) -> Version | None:
    assert facts.torch is not None
    cuda = facts.torch.version.cuda
    return parse_version(cuda)[:2] if cuda else None


def _is_rocm(facts: Facts) -> bool:
    assert facts.torch is not None
    return bool(getattr(facts.torch.version, "hip", None))


def _gpu_names(smi: Smi) -> str:
    return ", ".join(gpu.name for gpu in smi.gpus) or "an NVIDIA GPU"


def _install_fix(facts: Facts, smi: Smi, capability: Version | None = None) -> str:
    """The pip command for the build that fits this driver (and GPU), or what to do instead."""
    assert facts.torch is not None
    build = pick_cuda_build(
        facts.torch.__version__,
        driver_cuda=smi.cuda,
        driver_version=smi.driver_version,
        capability=capability,
    )
    if build is None:
        return (
            "no published torch wheel fits this driver and GPU: update the NVIDIA driver"
            " (https://www.nvidia.com/Download/index.aspx), then run torchwise doctor again"
        )
    torch_spec, cuda = build
    return pip_install_torch(torch_spec, cuda=cuda)


def _smi_fails(finding_id: str, error: str) -> Finding:
    return Finding(
        finding_id,
        "fail",
        f"nvidia-smi is installed but fails: {error}",
        detail=(
            "The NVIDIA driver is not loaded or cannot reach the GPU, so no build of torch can"
            " use it. Usual causes: a driver or kernel update without a reboot, Secure Boot"
            " blocking the module, or a container started without --gpus all."
        ),
        fix="reboot; if that does not help, reinstall the NVIDIA driver, then run torchwise doctor",
    )


def check_cpu_build_with_gpu(facts: Facts) -> Finding:
    finding_id = "torch-cpu-build-with-gpu"
    if facts.smi is None:
        return Finding(finding_id, "info", NO_SMI)
    if _build_cuda(facts) or _is_rocm(facts):
        if facts.smi.error:  # reported once, by cuda-unavailable
            return Finding(finding_id, "info", "CUDA build of torch; nvidia-smi fails")
        return Finding(finding_id, "ok", f"CUDA build of torch for {_gpu_names(facts.smi)}")
    if facts.smi.error:
        return _smi_fails(finding_id, facts.smi.error)
    assert facts.torch is not None
    return Finding(
        finding_id,
        "fail",
        f"{_gpu_names(facts.smi)} is present but torch {facts.torch.__version__} is a CPU build",
        detail=(
            "A CPU-only wheel never uses the GPU: torch.cuda.is_available() stays False. It is"
            " what pip installs from PyPI on Windows and macOS, or from the /whl/cpu index."
        ),
        fix=_install_fix(facts, facts.smi),
    )


def check_driver_too_old(facts: Facts) -> Finding:
    finding_id = "driver-too-old"
    build = _build_cuda(facts)
    if facts.smi is None or build is None or facts.smi.cuda is None:
        why = NO_SMI if facts.smi is None else "no CUDA build or no CUDA version from the driver"
        return Finding(finding_id, "info", f"not applicable: {why}")
    smi = facts.smi
    summary = (
        f"driver {smi.driver_version} runs CUDA up to {format_version(smi.cuda)};"
        f" torch is built for CUDA {format_version(build)}"
    )
    if build <= smi.cuda:
        return Finding(finding_id, "ok", summary)
    if driver_runs_cuda(build, driver_cuda=smi.cuda, driver_version=smi.driver_version):
        return Finding(
            finding_id,
            "ok",
            summary,
            detail=(
                f"Runs through CUDA minor-version compatibility (driver >="
                f" {MINOR_COMPAT_MIN_DRIVER[build[0]]}); a driver for CUDA"
                f" {format_version(build)} or newer is still better for new features."
            ),
        )
    needed = MIN_DRIVER_FOR_CUDA.get(build, f"one for CUDA {format_version(build)}")
    return Finding(
        finding_id,
        "fail",
        summary + ": the driver is too old for this build",
        detail=(
            "torch raises 'The NVIDIA driver on your system is too old' and"
            " torch.cuda.is_available() is False."
        ),
        fix=(
            f"install NVIDIA driver {needed} or newer, or the torch build that fits this driver:"
            f" {_install_fix(facts, smi)}"
        ),
    )


def _capabilities(facts: Facts) -> list[tuple[str, Version]]:
    """(name, capability) per GPU, from nvidia-smi or, when it cannot tell, from torch."""
    assert facts.torch is not None
    smi_gpus = facts.smi.gpus if facts.smi else []
    known = [(gpu.name, gpu.capability) for gpu in smi_gpus if gpu.capability]
    if known or not facts.torch.cuda.is_available():
        return known
    cuda = facts.torch.cuda
    return [
        (cuda.get_device_name(i), tuple(cuda.get_device_capability(i)))
        for i in range(cuda.device_count())
    ]


def _arch_list(torch: ModuleType) -> list[str]:
    """The archs the wheel carries. Before torch 2.4 ``get_arch_list()`` is empty whenever
    CUDA is unavailable, which is exactly when it is wanted, so ask the compiled flags then."""
    arch_list = list(torch.cuda.get_arch_list())
    if arch_list:
        return arch_list
    flags = getattr(torch._C, "_cuda_getArchFlags", None)
    return (flags() or "").split() if flags else []


def _arch_needs(capability: Version) -> str:
    low, high = arch_cuda_range(capability)
    if low:
        return f"a CUDA {format_version(low)}+ build"
    if high == (0, 0):
        return "a source build with TORCH_CUDA_ARCH_LIST set (no current wheel has it)"
    if high:
        return f"a CUDA {format_version(high)} or older build"
    return "a build that lists it"


def check_gpu_arch(facts: Facts) -> Finding:
    finding_id = "gpu-arch-unsupported"
    assert facts.torch is not None
    if _build_cuda(facts) is None:
        return Finding(finding_id, "info", "not applicable: torch is not a CUDA build")
    gpus = _capabilities(facts)
    if not gpus:
        return Finding(finding_id, "info", "no GPU compute capability to check")
    arch_list = _arch_list(facts.torch)
    if not arch_list:
        return Finding(finding_id, "info", "this torch does not say which GPU archs it carries")
    missing = [(name, cap) for name, cap in gpus if not arch_list_covers(arch_list, cap)]
    listed = ", ".join(f"{name} (sm_{cap[0]}{cap[1]})" for name, cap in gpus)
    if not missing:
        return Finding(finding_id, "ok", f"kernels for {listed}", detail=" ".join(arch_list))
    name, capability = missing[0]
    sm = f"sm_{capability[0]}{capability[1]}"
    smi = facts.smi or Smi(driver_version=None, cuda=None)
    return Finding(
        finding_id,
        "fail",
        f"{name} is {sm}, which this torch build has no kernels for",
        detail=(
            f"torch.cuda.get_arch_list() = {arch_list}. Every CUDA op fails with 'no kernel image"
            f" is available for execution on the device'. This GPU needs {_arch_needs(capability)}."
        ),
        fix=_install_fix(facts, smi, capability),
    )


def check_cuda_unavailable(facts: Facts) -> Finding:
    finding_id = "cuda-unavailable"
    torch = facts.torch
    assert torch is not None
    build = _build_cuda(facts)
    if build is None and not _is_rocm(facts):
        return Finding(finding_id, "info", "CPU build of torch: CUDA is not expected")
    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        return Finding(finding_id, "ok", f"CUDA available: {count} device(s)")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip().lower() in HIDDEN_VALUES:
        return Finding(
            finding_id,
            "fail",
            f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU",
            fix="unset CUDA_VISIBLE_DEVICES (or set it to the GPU ids to use, e.g. 0)",
        )
    if visible is not None and facts.smi and _names_no_gpu(visible, len(facts.smi.gpus)):
        return Finding(
            finding_id,
            "fail",
            f"CUDA_VISIBLE_DEVICES={visible!r} names no GPU that exists",
            detail=f"nvidia-smi lists GPUs 0 to {len(facts.smi.gpus) - 1}.",
            fix="set CUDA_VISIBLE_DEVICES to ids nvidia-smi lists, or unset it",
        )
    if _is_rocm(facts):
        return Finding(
            finding_id,
            "fail",
            "ROCm build but no AMD GPU is visible",
            detail="Check rocm-smi, HIP_VISIBLE_DEVICES, and that the user is in the render group.",
            fix="sudo usermod -aG render,video $USER  (then log in again)",
        )
    if facts.smi is not None and facts.smi.error:
        return _smi_fails(finding_id, facts.smi.error)
    if facts.smi is None:
        return Finding(
            finding_id,
            "info",
            "CUDA build but no NVIDIA GPU: torch runs on the CPU",
            detail="In a container, the GPU must be passed in (docker run --gpus all).",
            fix=f"on a machine without a GPU the smaller CPU build is enough: {CPU_INSTALL}",
        )
    if (
        facts.smi.cuda
        and build
        and not driver_runs_cuda(
            build, driver_cuda=facts.smi.cuda, driver_version=facts.smi.driver_version
        )
    ):
        return Finding(
            finding_id,
            "fail",
            "CUDA is unavailable because the driver is too old for this build",
            fix="see driver-too-old",
        )
    return Finding(
        finding_id,
        "fail",
        "nvidia-smi sees a GPU but torch cannot use it",
        detail=_init_error(torch),
        fix="reboot after a driver update; in a container run it with --gpus all",
    )


def _names_no_gpu(visible: str, gpu_count: int) -> bool:
    """True when every id in CUDA_VISIBLE_DEVICES is a number past the last GPU."""
    ids = [item.strip() for item in visible.split(",")]
    return all(item.isdigit() and int(item) >= gpu_count for item in ids)


def _init_error(torch: ModuleType) -> str:
    try:
        torch.cuda.init()
    except Exception as err:  # noqa: BLE001 - the error text is the evidence
        return f"torch.cuda.init() says: {err}"
    return "torch.cuda.init() raised nothing; the driver may have been updated without a reboot."


def check_gpu_count(facts: Facts) -> Finding:
    finding_id = "gpu-count"
    assert facts.torch is not None
    seen_by_driver = len(facts.smi.gpus) if facts.smi else 0
    seen_by_torch = facts.torch.cuda.device_count() if facts.torch.cuda.is_available() else 0
    summary = f"{seen_by_torch} GPU(s) for torch, {seen_by_driver} on the driver"
    if seen_by_torch < seen_by_driver and seen_by_torch > 0:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        return Finding(
            finding_id,
            "warn",
            summary,
            detail=f"CUDA_VISIBLE_DEVICES={visible!r}" if visible else "",
            fix="unset CUDA_VISIBLE_DEVICES to use every GPU",
        )
    return Finding(finding_id, "info" if seen_by_torch == 0 else "ok", summary)


def check_nccl(facts: Facts) -> Finding:
    torch = facts.torch
    assert torch is not None
    distributed = getattr(torch, "distributed", None)
    if distributed is None or not distributed.is_available():
        return Finding(
            "nccl",
            "warn",
            "this torch build has no torch.distributed",
            detail="Multi-process training (torchrun) is impossible with it.",
            fix="pip install --force-reinstall torch  (official wheels include torch.distributed)",
        )
    if not torch.cuda.is_available():
        return Finding("nccl", "info", "no CUDA: multi-process training uses the gloo backend")
    if distributed.is_nccl_available():
        return Finding("nccl", "ok", "NCCL available for multi-GPU training")
    return Finding(
        "nccl",
        "fail" if torch.cuda.device_count() > 1 else "warn",
        "NCCL is not available in this CUDA build",
        detail="DDP across GPUs needs NCCL (Windows builds have none: use Linux or WSL2).",
        fix=_install_fix(facts, facts.smi) if facts.smi else "install the Linux CUDA wheel",
    )


def check_mps(facts: Facts) -> Finding:
    torch = facts.torch
    assert torch is not None
    if platform.system() != "Darwin":
        return Finding("mps", "info", "not macOS: MPS does not apply")
    mps = torch.backends.mps
    if mps.is_available():
        return Finding("mps", "ok", "MPS (Apple GPU) available")
    if not mps.is_built():
        return Finding(
            "mps",
            "warn",
            "this torch build has no MPS support",
            fix="pip install --force-reinstall torch  (the PyPI wheel for macOS arm64 has MPS)",
        )
    if platform.machine() != "arm64":
        return Finding(
            "mps",
            "warn",
            "MPS is built but unavailable: Python runs as x86_64 (Rosetta)",
            detail="An Intel-emulated Python cannot reach the Apple GPU.",
            fix="install an arm64 Python (python.org installer or `brew install python`)",
        )
    return Finding(
        "mps",
        "warn",
        "MPS is built but unavailable: macOS is older than 12.3",
        detail=f"macOS {platform.mac_ver()[0] or 'unknown'}",
        fix="update macOS to 12.3 or newer",
    )
