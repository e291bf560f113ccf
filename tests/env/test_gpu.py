"""Each GPU fault, simulated on a CPU machine, yields its id, its level and the exact fix."""

from __future__ import annotations

import platform

import torch

from torchwise.env import gpu

# Wheels' arch lists as torch.cuda.get_arch_list() prints them.
ARCH_CU124 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
ARCH_CU128 = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]

RTX_4090 = ("NVIDIA GeForce RTX 4090", "8.9", 24564)
RTX_5090 = ("NVIDIA GeForce RTX 5090", "12.0", 32607)
A100 = ("NVIDIA A100-SXM4-80GB", "8.0", 81920)


def test_cpu_build_on_a_gpu_machine_names_the_cuda_wheel(make_facts, fake_smi, torch_build):
    smi = fake_smi(driver="550.54.14", cuda="12.4", gpus=[RTX_4090])
    torch_build("2.5.1+cpu")
    finding = gpu.check_cpu_build_with_gpu(make_facts(smi))
    assert (finding.id, finding.level) == ("torch-cpu-build-with-gpu", "fail")
    assert "NVIDIA GeForce RTX 4090" in finding.summary
    assert finding.fix == (
        "pip install --force-reinstall torch==2.5.1"
        " --index-url https://download.pytorch.org/whl/cu124"
    )


def test_cuda_build_on_a_gpu_machine_is_fine(make_facts, fake_smi, torch_build):
    smi = fake_smi(driver="550.54.14", cuda="12.4", gpus=[RTX_4090])
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=ARCH_CU124)
    assert gpu.check_cpu_build_with_gpu(make_facts(smi)).level == "ok"


def test_no_gpu_at_all_is_not_a_fault(make_facts, torch_build):
    torch_build("2.5.1+cpu")
    finding = gpu.check_cpu_build_with_gpu(make_facts(None))
    assert finding.level == "info"


def test_driver_too_old_names_the_driver_and_the_build_that_fits(make_facts, fake_smi, torch_build):
    smi = fake_smi(driver="470.82.01", cuda="11.4", gpus=[A100])
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=ARCH_CU124)
    finding = gpu.check_driver_too_old(make_facts(smi))
    assert (finding.id, finding.level) == ("driver-too-old", "fail")
    assert "CUDA up to 11.4" in finding.summary and "CUDA 12.4" in finding.summary
    assert finding.fix == (
        "install NVIDIA driver 550.54.14 or newer, or the torch build that fits this driver:"
        " pip install --force-reinstall torch==2.5.1"
        " --index-url https://download.pytorch.org/whl/cu118"
    )


def test_older_minor_driver_runs_by_minor_version_compatibility(make_facts, fake_smi, torch_build):
    smi = fake_smi(driver="535.104.05", cuda="12.2", gpus=[A100])
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=ARCH_CU124)
    finding = gpu.check_driver_too_old(make_facts(smi))
    assert finding.level == "ok"
    assert "minor-version compatibility" in finding.detail


def test_gpu_arch_missing_from_the_wheel_is_no_kernel_image(make_facts, fake_smi, torch_build):
    smi = fake_smi(driver="570.86.10", cuda="12.8", gpus=[RTX_5090])
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=ARCH_CU124)
    finding = gpu.check_gpu_arch(make_facts(smi))
    assert (finding.id, finding.level) == ("gpu-arch-unsupported", "fail")
    assert "sm_120" in finding.summary
    assert "no kernel image is available" in finding.detail
    assert finding.detail.endswith("This GPU needs a CUDA 12.8+ build.")
    assert finding.fix == (
        'pip install --force-reinstall "torch==2.10.*"'
        " --index-url https://download.pytorch.org/whl/cu128"
    )


def test_old_gpu_on_a_new_wheel_is_pointed_to_an_older_cuda(make_facts, fake_smi, torch_build):
    smi = fake_smi(driver="570.86.10", cuda="12.8", gpus=[("NVIDIA GeForce GTX 1080", "6.1", 8192)])
    torch_build("2.7.1+cu128", cuda="12.8", arch_list=ARCH_CU128)
    finding = gpu.check_gpu_arch(make_facts(smi))
    assert finding.level == "fail"
    assert "sm_61" in finding.summary
    assert finding.detail.endswith("This GPU needs a CUDA 12.6 or older build.")
    assert finding.fix == (
        "pip install --force-reinstall torch==2.7.1"
        " --index-url https://download.pytorch.org/whl/cu126"
    )


def test_gpu_covered_by_an_older_minor_arch_is_fine(make_facts, fake_smi, torch_build):
    smi = fake_smi(driver="550.54.14", cuda="12.4", gpus=[RTX_4090])
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=ARCH_CU124)
    finding = gpu.check_gpu_arch(make_facts(smi))
    assert finding.level == "ok"
    assert "sm_89" in finding.summary


def test_cuda_unavailable_because_cuda_visible_devices_hides_the_gpus(
    make_facts, fake_smi, torch_build, monkeypatch
):
    smi = fake_smi(driver="550.54.14", cuda="12.4", gpus=[RTX_4090])
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=ARCH_CU124, available=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    finding = gpu.check_cuda_unavailable(make_facts(smi))
    assert (finding.id, finding.level) == ("cuda-unavailable", "fail")
    assert "CUDA_VISIBLE_DEVICES" in finding.summary
    assert finding.fix.startswith("unset CUDA_VISIBLE_DEVICES")


def test_cuda_unavailable_because_the_driver_is_too_old(
    make_facts, fake_smi, torch_build, monkeypatch
):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    smi = fake_smi(driver="470.82.01", cuda="11.4", gpus=[A100])
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=ARCH_CU124, available=False)
    finding = gpu.check_cuda_unavailable(make_facts(smi))
    assert finding.level == "fail"
    assert "driver is too old" in finding.summary


def test_cuda_unavailable_with_a_working_driver_shows_the_init_error(
    make_facts, fake_smi, torch_build, monkeypatch
):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    smi = fake_smi(driver="550.54.14", cuda="12.4", gpus=[RTX_4090])
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=ARCH_CU124, available=False)

    def init() -> None:
        raise RuntimeError("CUDA driver initialization failed, you might not have a CUDA gpu.")

    monkeypatch.setattr(torch.cuda, "init", init)
    finding = gpu.check_cuda_unavailable(make_facts(smi))
    assert finding.level == "fail"
    assert "CUDA driver initialization failed" in finding.detail


def test_cuda_build_without_any_gpu_is_only_information(make_facts, torch_build, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    torch_build("2.5.1", cuda="12.4", arch_list=ARCH_CU124, available=False)
    finding = gpu.check_cuda_unavailable(make_facts(None))
    assert finding.level == "info"
    assert "whl/cpu" in finding.fix


def test_torch_seeing_fewer_gpus_than_the_driver_warns(
    make_facts, fake_smi, torch_build, monkeypatch
):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    smi = fake_smi(driver="550.54.14", cuda="12.4", gpus=[A100, A100])
    torch_build(
        "2.5.1+cu124", cuda="12.4", available=True, devices=[("NVIDIA A100-SXM4-80GB", (8, 0))]
    )
    finding = gpu.check_gpu_count(make_facts(smi))
    assert (finding.id, finding.level) == ("gpu-count", "warn")
    assert finding.summary == "1 GPU(s) for torch, 2 on the driver"
    assert "CUDA_VISIBLE_DEVICES='0'" in finding.detail


def test_multi_gpu_without_nccl_fails(make_facts, fake_smi, torch_build, monkeypatch):
    smi = fake_smi(driver="550.54.14", cuda="12.4", gpus=[A100, A100])
    torch_build("2.5.1+cu124", cuda="12.4", available=True, devices=[("A100", (8, 0))] * 2)
    monkeypatch.setattr(torch.distributed, "is_nccl_available", lambda: False)
    finding = gpu.check_nccl(make_facts(smi))
    assert (finding.id, finding.level) == ("nccl", "fail")
    assert "--index-url https://download.pytorch.org/whl/cu124" in finding.fix


def test_mps_under_rosetta_names_the_arm64_python(make_facts, torch_build, monkeypatch):
    torch_build("2.5.1")
    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(torch.backends.mps, "is_built", lambda: True)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    finding = gpu.check_mps(make_facts(None))
    assert (finding.id, finding.level) == ("mps", "warn")
    assert "Rosetta" in finding.summary
    assert "arm64 Python" in finding.fix


def test_mps_on_old_macos(make_facts, torch_build, monkeypatch):
    torch_build("2.5.1")
    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    monkeypatch.setattr(platform, "machine", lambda: "arm64")
    monkeypatch.setattr(platform, "mac_ver", lambda: ("12.1", ("", "", ""), "arm64"))
    monkeypatch.setattr(torch.backends.mps, "is_built", lambda: True)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    finding = gpu.check_mps(make_facts(None))
    assert finding.level == "warn"
    assert finding.detail == "macOS 12.1"
    assert finding.fix == "update macOS to 12.3 or newer"


def test_mps_is_not_a_question_off_macos(make_facts, monkeypatch):
    monkeypatch.setattr(platform, "system", lambda: "Linux")
    assert gpu.check_mps(make_facts(None)).level == "info"


def test_unknown_arch_list_is_not_reported_as_a_missing_arch(make_facts, fake_smi, torch_build):
    smi = fake_smi(driver="550.54.14", cuda="12.4", gpus=[RTX_4090])
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=[])
    finding = gpu.check_gpu_arch(make_facts(smi))
    assert (finding.id, finding.level) == ("gpu-arch-unsupported", "info")


def test_cuda_visible_devices_naming_a_missing_gpu(make_facts, fake_smi, torch_build, monkeypatch):
    smi = fake_smi(driver="550.54.14", cuda="12.4", gpus=[A100, A100])
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=ARCH_CU124, available=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    finding = gpu.check_cuda_unavailable(make_facts(smi))
    assert (finding.level, finding.summary) == (
        "fail",
        "CUDA_VISIBLE_DEVICES='2,3' names no GPU that exists",
    )
    assert finding.detail == "nvidia-smi lists GPUs 0 to 1."


def test_driver_not_loaded_fails_once_with_the_reboot_fix(
    make_facts, failing_smi, torch_build, monkeypatch
):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    torch_build("2.5.1+cu124", cuda="12.4", arch_list=ARCH_CU124, available=False)
    unavailable = gpu.check_cuda_unavailable(make_facts(failing_smi))
    assert (unavailable.id, unavailable.level) == ("cuda-unavailable", "fail")
    assert unavailable.summary.startswith(
        "nvidia-smi is installed but fails: NVIDIA-SMI has failed"
    )
    assert unavailable.fix.startswith("reboot")
    assert gpu.check_cpu_build_with_gpu(make_facts(failing_smi)).level == "info"


def test_driver_not_loaded_on_a_cpu_build(make_facts, failing_smi, torch_build):
    torch_build("2.5.1+cpu")
    finding = gpu.check_cpu_build_with_gpu(make_facts(failing_smi))
    assert (finding.id, finding.level) == ("torch-cpu-build-with-gpu", "fail")
    assert "NVIDIA-SMI has failed" in finding.summary
