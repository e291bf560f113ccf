from __future__ import annotations

import pytest

from torchwise.env.compat import (
    arch_list_covers,
    companion_version,
    cuda_from_driver_code,
    driver_runs_cuda,
    local_tag,
    parse_version,
    pick_cuda_build,
    pip_install_torch,
)
from torchwise.env.precision import pick_precision


@pytest.mark.parametrize(
    ("package", "torch_version", "wanted"),
    [
        ("torchvision", "1.13.1", "0.14"),
        ("torchvision", "2.0.1+cu118", "0.15"),
        ("torchvision", "2.5.1+cu124", "0.20"),
        ("torchvision", "2.13.0+cpu", "0.28"),  # newer than the table: the 2.x rule
        ("torchaudio", "1.12.0", "0.12"),
        ("torchaudio", "2.5.1", "2.5"),
        ("torchaudio", "2.13.0", "2.13"),
    ],
)
def test_companion_versions(package, torch_version, wanted):
    assert companion_version(package, torch_version) == wanted


def test_versions_and_tags():
    assert parse_version("2.5.1+cu124") == (2, 5, 1)
    assert parse_version("2.6.0.dev20250101") == (2, 6, 0)
    assert local_tag("2.5.1+rocm6.2") == "rocm6.2"
    assert local_tag("2.5.1") == ""
    assert cuda_from_driver_code(11040) == (11, 4)
    assert cuda_from_driver_code(12020) == (12, 2)


@pytest.mark.parametrize(
    ("arch_list", "capability", "covered"),
    [
        (["sm_80", "sm_86", "sm_90"], (8, 9), True),  # sm_86 cubin runs on 8.9
        (["sm_80", "sm_86", "sm_90"], (12, 0), False),  # Blackwell: no kernel image
        (["sm_80", "sm_90", "compute_90"], (12, 0), True),  # PTX is JIT-compiled upward
        (["sm_90a"], (9, 0), True),
        (["sm_90a"], (10, 0), False),  # arch-specific cubins never run elsewhere
        (["sm_75", "sm_80"], (6, 1), False),  # a GTX 1080 on a wheel without Pascal
        ([], (8, 0), False),
    ],
)
def test_arch_list_covers(arch_list, capability, covered):
    assert arch_list_covers(arch_list, capability) is covered


def test_minor_version_compatibility():
    # A 12.4 build on a 12.2 driver runs when the driver is at least 525.60.13.
    assert driver_runs_cuda((12, 4), driver_cuda=(12, 2), driver_version="535.104.05")
    assert not driver_runs_cuda((12, 4), driver_cuda=(12, 0), driver_version="525.60.11")
    assert not driver_runs_cuda((12, 1), driver_cuda=(11, 8), driver_version="520.61.05")
    assert driver_runs_cuda((11, 8), driver_cuda=(12, 4), driver_version="550.54.14")


def test_pick_cuda_build_prefers_the_installed_torch_and_a_native_cuda():
    assert pick_cuda_build("2.5.1+cpu", driver_cuda=(12, 4), driver_version="550.54.14") == (
        "2.5.1",
        (12, 4),
    )
    # A 12.2 driver would run the 12.4 build by minor-version compatibility, but the newest
    # build it runs natively (12.1) is preferred.
    assert pick_cuda_build("2.5.1", driver_cuda=(12, 2), driver_version="535.104.05") == (
        "2.5.1",
        (12, 1),
    )
    # torch 2.8 has no CUDA 11 build: the newest release that has one is named.
    assert pick_cuda_build("2.8.0", driver_cuda=(11, 4), driver_version="470.82.01") == (
        "2.7.*",
        (11, 8),
    )
    # An RTX 5090 needs CUDA 12.8, which torch 2.5 was never built for.
    assert pick_cuda_build(
        "2.5.1", driver_cuda=(12, 8), driver_version="570.86.10", capability=(12, 0)
    ) == ("2.10.*", (12, 8))


def test_pip_command_is_exact_and_quotes_wildcards():
    assert pip_install_torch("2.5.1+cpu", cuda=(12, 4)) == (
        "pip install --force-reinstall torch==2.5.1"
        " --index-url https://download.pytorch.org/whl/cu124"
    )
    assert pip_install_torch("2.7.*", cuda=(11, 8)) == (
        'pip install --force-reinstall "torch==2.7.*"'
        " --index-url https://download.pytorch.org/whl/cu118"
    )


@pytest.mark.parametrize(
    ("device_type", "bf16", "precision"),
    [("cuda", True, "bf16"), ("cuda", False, "fp16"), ("cpu", True, "fp32"), ("mps", True, "fp32")],
)
def test_pick_precision_is_the_trainers_auto_rule(device_type, bf16, precision):
    assert pick_precision(device_type, bf16_supported=bf16) == precision
