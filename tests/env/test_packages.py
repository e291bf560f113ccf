from __future__ import annotations

import pytest

from torchwise.env import packages, probe


@pytest.fixture
def installed(monkeypatch):
    """Pretend these distributions are installed (anything else is absent)."""

    def pretend(**versions: str) -> None:
        monkeypatch.setattr(probe, "installed_version", lambda name: versions.get(name))

    return pretend


def test_torchvision_from_another_torch_release_fails_with_the_matching_pin(
    make_facts, torch_build, installed
):
    torch_build("2.5.1+cu124", cuda="12.4")
    installed(torchvision="0.15.2+cu118")
    finding = packages.check_torchvision(make_facts())
    assert (finding.id, finding.level) == ("torchvision-mismatch", "fail")
    assert "torch 2.5.1 needs torchvision 0.20.x" in finding.detail
    assert "operator torchvision::nms does not exist" in finding.detail
    assert finding.fix == (
        'pip install --force-reinstall --no-deps "torchvision==0.20.*"'
        " --index-url https://download.pytorch.org/whl/cu124"
    )


def test_torchvision_cpu_build_next_to_a_cuda_torch_fails(make_facts, torch_build, installed):
    torch_build("2.5.1+cu124", cuda="12.4")
    installed(torchvision="0.20.1+cpu")
    finding = packages.check_torchvision(make_facts())
    assert finding.level == "fail"
    assert "torch is a +cu124 build but torchvision is +cpu" in finding.detail


def test_matching_torchvision_is_ok(make_facts, torch_build, installed):
    torch_build("2.5.1+cu124", cuda="12.4")
    installed(torchvision="0.20.1+cu124")
    assert packages.check_torchvision(make_facts()).level == "ok"


def test_torchaudio_mismatch(make_facts, torch_build, installed):
    torch_build("2.5.1")
    installed(torchaudio="2.4.0")
    finding = packages.check_torchaudio(make_facts())
    assert (finding.id, finding.level) == ("torchaudio-mismatch", "fail")
    assert finding.fix == 'pip install --force-reinstall --no-deps "torchaudio==2.5.*"'


def test_absent_companions_are_not_faults(make_facts, torch_build, installed):
    torch_build("2.5.1+cpu")
    installed()
    assert packages.check_torchvision(make_facts()).level == "info"
    assert packages.check_torchaudio(make_facts()).level == "info"


def test_torch_import_reports_build_flavour(make_facts, torch_build):
    torch_build("2.5.1+cu124", cuda="12.4")
    finding = packages.check_torch_import(make_facts())
    assert (finding.level, finding.summary) == ("ok", "torch 2.5.1+cu124 (cuda 12.4 build)")


def test_python_too_old_fails(make_facts, monkeypatch):
    monkeypatch.setattr(packages, "python_version", lambda: (3, 8, 18))
    finding = packages.check_python(make_facts())
    assert (finding.id, finding.level) == ("python", "fail")
    assert finding.fix.startswith("create the environment with a newer Python: python3.10")


def test_torch_not_installed_says_which_interpreter_to_install_into():
    from torchwise.env.probe import Facts

    facts = Facts(torch=None, torch_error="ModuleNotFoundError: No module named 'torch'", smi=None)
    finding = packages.check_torch_import(facts)
    assert (finding.id, finding.level) == ("torch-import", "fail")
    assert finding.summary == "torch does not import (ModuleNotFoundError: No module named 'torch')"
    assert "same interpreter" in finding.detail
    assert finding.fix.endswith(" -m pip install --force-reinstall torch")
