"""Checks that run real work: a matmul and a gradient on every device, mixed precision, compile."""

from __future__ import annotations

import importlib.util
import inspect
import os
import platform
import shutil
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from torchwise.env.findings import Finding
from torchwise.env.precision import pick_precision
from torchwise.env.probe import Facts

# 64x64 float32 against a float64 reference: plain fp32 is off by ~1e-5, TF32 by ~1e-2.
MATMUL_TOLERANCE = 5e-2
CXX_NAMES = ("c++", "g++", "clang++")


def devices(torch: ModuleType) -> list[str]:
    found = ["cpu"]
    if torch.cuda.is_available():
        found += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    return found


def _fix_for(problems: list[str], runs: str) -> str:
    # here, not at the top: explain reads env.compat, so env importing it is a cycle
    from torchwise.explain.lookup import explain

    for problem in problems:
        # the operation the trial ran, as a traceback shows the line that raised: explain reads a
        # failing kernel as torch's own build only where the paste says the operation was torch's
        explanation = explain(f"    {runs}\n{problem.split(': ', 1)[-1]}")
        if explanation is not None:
            return explanation.fix
    return "reinstall torch (pip install --force-reinstall torch) and run torchwise doctor again"


def _smoke(
    torch: ModuleType, finding_id: str, trial: Callable[[str], str | None], *, works: str, runs: str
) -> Finding:
    """Run ``trial(device)`` on every device; it returns a problem, or None when all is right."""
    problems, tested = [], devices(torch)
    for device in tested:
        try:
            problem = trial(device)
        except Exception as err:  # noqa: BLE001 - any failure here is the finding
            problem = f"{type(err).__name__}: {err}"
        if problem:
            problems.append(f"{device}: {problem}")
    if problems:
        return Finding(
            finding_id,
            "fail",
            f"{finding_id.removeprefix('smoke-')} wrong or failing on {len(problems)} device(s)",
            detail="\n".join(problems),
            fix=_fix_for(problems, runs),
        )
    return Finding(finding_id, "ok", f"{works} on {', '.join(tested)}")


def check_smoke_matmul(facts: Facts) -> Finding:
    torch = facts.torch
    assert torch is not None
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(64, 64, generator=generator)
    b = torch.randn(64, 64, generator=generator)
    reference = a.double() @ b.double()

    def trial(device: str) -> str | None:
        result = torch.matmul(a.to(device), b.to(device)).cpu().double()
        error = (result - reference).abs().max().item()
        if error <= MATMUL_TOLERANCE:  # written so that NaN counts as wrong
            return None
        return f"result off by {error:.3g} (tolerance {MATMUL_TOLERANCE})"

    return _smoke(
        torch, "smoke-matmul", trial, works="64x64 matmul matches the reference", runs="torch.matmul(a, b)"
    )


def check_smoke_autograd(facts: Facts) -> Finding:
    torch = facts.torch
    assert torch is not None

    def trial(device: str) -> str | None:
        x = torch.tensor(2.0, device=device, requires_grad=True)
        (x**2 + 3 * x + 1).backward()
        grad = None if x.grad is None else x.grad.item()
        return None if grad == 7.0 else f"d/dx (x^2 + 3x + 1) at x = 2 gave {grad}, expected 7"

    return _smoke(
        torch,
        "smoke-autograd",
        trial,
        works="d/dx (x^2 + 3x + 1) at x = 2 is 7",
        runs="torch.autograd.backward(x**2 + 3 * x + 1)",
    )


def _bf16_native(torch: ModuleType) -> bool:
    # Since torch 2.3 the default also counts emulated bf16 on pre-Ampere GPUs, which is slow.
    supported = torch.cuda.is_bf16_supported
    if "including_emulation" in inspect.signature(supported).parameters:
        return bool(supported(including_emulation=False))
    return bool(supported())


def _gpu(torch: ModuleType) -> str:
    major, minor = torch.cuda.get_device_capability(0)
    return f"{torch.cuda.get_device_name(0)} (compute capability {major}.{minor})"


def check_bf16(facts: Facts) -> Finding:
    torch = facts.torch
    assert torch is not None
    if not torch.cuda.is_available():
        precision = pick_precision("cpu", bf16_supported=False)
        return Finding("bf16", "info", f"no CUDA: torchwise train picks {precision}")
    gpu, native = _gpu(torch), _bf16_native(torch)
    precision = pick_precision("cuda", bf16_supported=native)
    if native:
        return Finding("bf16", "ok", f"bf16 on {gpu}: torchwise train picks {precision}")
    return Finding(
        "bf16",
        "info",
        f"no native bf16 on {gpu}: torchwise train picks {precision} with GradScaler",
        detail="bf16 needs compute capability 8.0 (Ampere) or newer.",
    )


def check_tf32(facts: Facts) -> Finding:
    torch = facts.torch
    assert torch is not None
    if not torch.cuda.is_available():
        return Finding("tf32", "info", "no CUDA: TF32 does not apply")
    gpu = _gpu(torch)
    if tuple(torch.cuda.get_device_capability(0)) < (8, 0):
        return Finding("tf32", "info", f"no TF32 on {gpu}: needs compute capability 8.0+")
    setting = torch.get_float32_matmul_precision()
    return Finding(
        "tf32",
        "ok",
        f"TF32 available on {gpu}",
        detail=f"torch.get_float32_matmul_precision() = {setting!r} ('high' enables TF32)",
    )


def check_amp(facts: Facts) -> Finding:
    torch = facts.torch
    assert torch is not None
    device_type = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16
    if device_type == "cuda" and not _bf16_native(torch):
        dtype = torch.float16
    try:
        layer = torch.nn.Linear(8, 8).to(device_type)
        with torch.autocast(device_type, dtype=dtype):
            out = layer(torch.ones(2, 8, device=device_type))
    except Exception as err:  # noqa: BLE001 - any failure here is the finding
        return Finding(
            "amp",
            "warn",
            f"autocast on {device_type} failed: {type(err).__name__}: {err}",
            fix="train in fp32 (precision: fp32) until torch is reinstalled",
        )
    if out.dtype != dtype:
        return Finding("amp", "warn", f"autocast on {device_type} gave {out.dtype}, not {dtype}")
    precision = pick_precision(device_type, bf16_supported=dtype == torch.bfloat16)
    if device_type == "cpu":
        return Finding(
            "amp", "info", f"CPU autocast ({dtype}) works; torchwise train uses {precision} on CPU"
        )
    scaler = " with GradScaler" if precision == "fp16" else ""
    return Finding(
        "amp", "ok", f"CUDA autocast ({dtype}) works; torchwise train uses {precision}{scaler}"
    )


def find_cxx() -> str | None:
    """The C++ compiler inductor would use: $CXX, else the first of c++, g++, clang++ on PATH."""
    if os.environ.get("CXX"):
        return shutil.which(os.environ["CXX"])
    names = ("cl",) if platform.system() == "Windows" else CXX_NAMES
    return next((path for path in map(shutil.which, names) if path), None)


def _compiler_fix() -> str:
    system = platform.system()
    if system == "Darwin":
        return "xcode-select --install"
    if system == "Windows":
        return "install Visual Studio Build Tools with 'Desktop development with C++'"
    return (
        "sudo apt-get install g++  (Fedora: sudo dnf install gcc-c++;"
        " conda: conda install -c conda-forge cxx-compiler)"
    )


def check_compile_toolchain(facts: Facts) -> Finding:
    torch = facts.torch
    assert torch is not None
    cxx = find_cxx()
    if cxx is None:
        return Finding(
            "compile-toolchain",
            "warn",
            "no C++ compiler: torch.compile cannot build kernels",
            detail="Inductor writes C++ for the CPU (and Triton needs a C compiler for CUDA).",
            fix=_compiler_fix(),
        )
    if torch.cuda.is_available() and importlib.util.find_spec("triton") is None:
        return Finding(
            "compile-toolchain",
            "warn",
            "Triton is missing: torch.compile cannot target CUDA",
            fix="pip install triton",
        )
    summary = f"C++ compiler {cxx}" + (" and Triton" if torch.cuda.is_available() else "")
    if not facts.full:
        return Finding(
            "compile-toolchain", "ok", summary, detail="--full runs a real torch.compile"
        )
    return _compile_for_real(torch, summary)


def _compile_for_real(torch: ModuleType, summary: str) -> Finding:
    def function(x: Any) -> Any:
        return torch.sin(x) * 2 + x

    x = torch.linspace(-1, 1, 64)
    start = time.perf_counter()
    try:
        compiled = torch.compile(function)(x)
    except Exception as err:  # noqa: BLE001 - any failure here is the finding
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return Finding(
            "compile-toolchain",
            "fail",
            f"torch.compile failed: {type(err).__name__}: {first_line}",
            detail=str(err)[-2000:],
            fix="train without torch.compile (eager mode) and report the error above",
        )
    seconds = time.perf_counter() - start
    if not torch.allclose(compiled, function(x), atol=1e-5):
        return Finding(
            "compile-toolchain", "fail", "torch.compile gave a different result than eager"
        )
    return Finding("compile-toolchain", "ok", f"{summary}; torch.compile ran in {seconds:.1f} s")
