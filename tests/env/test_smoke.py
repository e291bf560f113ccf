from __future__ import annotations

import os

import pytest
import torch

from torchwise.env import smoke


def test_clean_cpu_matmul_and_autograd_pass(make_facts):
    matmul = smoke.check_smoke_matmul(make_facts())
    autograd = smoke.check_smoke_autograd(make_facts())
    assert (matmul.level, autograd.level) == ("ok", "ok")
    assert autograd.summary == "d/dx (x^2 + 3x + 1) at x = 2 is 7 on cpu"


def test_wrong_matmul_result_fails(make_facts, monkeypatch):
    monkeypatch.setattr(torch, "matmul", lambda a, b: torch.zeros(a.shape[0], b.shape[1]))
    finding = smoke.check_smoke_matmul(make_facts())
    assert (finding.id, finding.level) == ("smoke-matmul", "fail")
    assert finding.detail.startswith("cpu: result off by")


def test_matmul_error_is_explained_in_the_fix(make_facts, monkeypatch):
    def broken(a, b):
        raise RuntimeError("CUDA error: no kernel image is available for execution on the device")

    monkeypatch.setattr(torch, "matmul", broken)
    finding = smoke.check_smoke_matmul(make_facts())
    assert finding.level == "fail"
    assert "no kernel image" in finding.detail
    assert "torch.cuda.get_arch_list()" in finding.fix


def test_gradient_that_never_arrives_fails(make_facts, monkeypatch):
    monkeypatch.setattr(torch.Tensor, "backward", lambda self, *args, **kwargs: None)
    finding = smoke.check_smoke_autograd(make_facts())
    assert (finding.id, finding.level) == ("smoke-autograd", "fail")
    assert finding.detail == "cpu: d/dx (x^2 + 3x + 1) at x = 2 gave None, expected 7"


def test_cpu_precision_is_fp32(make_facts):
    assert smoke.check_bf16(make_facts()).summary == "no CUDA: torchwise train picks fp32"
    assert smoke.check_tf32(make_facts()).level == "info"
    amp = smoke.check_amp(make_facts())
    assert amp.level == "info" and "torchwise train uses fp32 on CPU" in amp.summary


def test_gpu_without_bf16_gets_fp16_with_grad_scaler(make_facts, torch_build):
    torch_build("2.5.1+cu124", cuda="12.4", available=True, devices=[("Tesla T4", (7, 5))])
    bf16 = smoke.check_bf16(make_facts())
    assert (bf16.id, bf16.level) == ("bf16", "info")
    assert bf16.summary == (
        "no native bf16 on Tesla T4 (compute capability 7.5):"
        " torchwise train picks fp16 with GradScaler"
    )
    tf32 = smoke.check_tf32(make_facts())
    assert (
        tf32.summary
        == "no TF32 on Tesla T4 (compute capability 7.5): needs compute capability 8.0+"
    )


def test_ampere_gets_bf16_and_tf32(make_facts, torch_build):
    gpu = [("NVIDIA A100-SXM4-80GB", (8, 0))]
    torch_build("2.5.1+cu124", cuda="12.4", available=True, devices=gpu, bf16=True)
    assert smoke.check_bf16(make_facts()).summary.endswith("torchwise train picks bf16")
    assert smoke.check_tf32(make_facts()).level == "ok"


def test_autocast_failure_warns(make_facts, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("autocast is broken here")

    monkeypatch.setattr(torch, "autocast", broken)
    finding = smoke.check_amp(make_facts())
    assert (finding.id, finding.level) == ("amp", "warn")
    assert "autocast is broken here" in finding.summary


def test_no_compiler_on_path_warns_with_the_install_command(make_facts, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(smoke.platform, "system", lambda: "Linux")
    finding = smoke.check_compile_toolchain(make_facts())
    assert (finding.id, finding.level) == ("compile-toolchain", "warn")
    assert finding.fix.startswith("sudo apt-get install g++")


def test_cxx_naming_a_missing_compiler_warns(make_facts, monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/g++-42")
    assert smoke.check_compile_toolchain(make_facts()).level == "warn"


def test_cuda_without_triton_warns(make_facts, torch_build, monkeypatch):
    torch_build("2.5.1+cu124", cuda="12.4", available=True, devices=[("A100", (8, 0))])
    monkeypatch.setattr(smoke.importlib.util, "find_spec", lambda name: None)
    if smoke.find_cxx() is None:
        pytest.skip("needs a C++ compiler on this machine")
    finding = smoke.check_compile_toolchain(make_facts())
    assert finding.level == "warn"
    assert finding.fix == "pip install triton"


@pytest.mark.slow
def test_full_runs_a_real_torch_compile(make_facts):
    if smoke.find_cxx() is None or os.name == "nt":
        pytest.skip("needs a C++ compiler")
    finding = smoke.check_compile_toolchain(make_facts(full=True))
    assert finding.level == "ok", finding.detail
    assert "torch.compile ran in" in finding.summary
