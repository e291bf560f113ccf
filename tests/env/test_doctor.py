from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
import pytest
import torch

from torchwise.env import CHECKS, doctor
from torchwise.env.doctor import SCHEMA_PATH, Check, run_check

IDS = [
    "python", "torch-import", "torch-cpu-build-with-gpu", "driver-too-old",
    "gpu-arch-unsupported", "cuda-unavailable", "torchvision-mismatch", "torchaudio-mismatch",
    "smoke-matmul", "smoke-autograd", "bf16", "tf32", "amp", "compile-toolchain",
    "dataloader-workers", "cpu-threads", "shm-size", "open-files", "mps", "gpu-count", "nccl",
    "disk-space", "memory",
]  # fmt: skip


def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def test_clean_cpu_machine_has_no_fail_and_every_id(tmp_path):
    report = doctor(runs_dir=tmp_path / "runs")
    assert [f.id for f in report.findings] == IDS
    assert [check.id for check in CHECKS] == IDS
    assert [f for f in report.findings if f.level == "fail"] == []
    assert report.exit_code == 0
    assert report.by_id("smoke-autograd").level == "ok"
    assert report.report["torch"].startswith("2.")


def test_json_validates_against_the_published_schema(tmp_path):
    jsonschema.validate(doctor(runs_dir=tmp_path).to_json(), schema())


def test_schema_rejects_an_unknown_level():
    good = doctor().to_json()
    good["findings"][0]["level"] = "error"
    with pytest.raises(jsonschema.ValidationError, match="'error' is not one of"):
        jsonschema.validate(good, schema())


def test_torch_that_does_not_import_fails_and_skips_the_rest(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` raise ImportError
    report = doctor(runs_dir=tmp_path)
    assert report.by_id("torch-import").level == "fail"
    assert "-m pip install --force-reinstall torch" in report.by_id("torch-import").fix
    assert report.by_id("smoke-matmul").summary == "skipped: torch does not import"
    assert report.exit_code == 1
    jsonschema.validate(report.to_json(), schema())


def test_a_crashing_check_becomes_a_warning_not_a_crash(make_facts):
    def broken(facts):
        raise KeyError("surprise")

    finding = run_check(Check("memory", broken, needs_torch=False), make_facts())
    assert (finding.id, finding.level) == ("memory", "warn")
    assert "KeyError" in finding.summary


def test_plain_block_lists_facts_and_problems(make_facts, tmp_path, monkeypatch):
    from torchwise.env import system

    monkeypatch.setattr(system, "shm_size_bytes", lambda: 64 * 1024**2)
    text = doctor(runs_dir=tmp_path).render_plain()
    assert "torch " in text and "start_method" in text
    if system.platform.system() == "Linux":
        assert "WARN shm-size: /dev/shm is only 64 MiB" in text


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torchwise", *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600,
    )  # fmt: skip


def test_cli_doctor_json_is_valid_and_exits_0_here(tmp_path):
    # No wall-clock bound: a busy machine broke one (12 s against 5); the README quotes the time.
    done = run_cli("doctor", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    jsonschema.validate(json.loads(done.stdout), schema())


@pytest.mark.skipif(torch.version.cuda is not None, reason="simulates a CPU build of torch")
def test_cli_doctor_exits_1_on_a_cpu_build_next_to_a_gpu(tmp_path):
    from tests.env.conftest import write_fake_smi

    folder = tmp_path / "bin"
    write_fake_smi(folder, driver="550.54.14", cuda="12.4", gpus=[("NVIDIA L4", "8.9", 23034)])
    done = run_cli("doctor", env={"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"})
    assert done.returncode == 1
    assert "torch-cpu-build-with-gpu" in done.stdout
    # torch 2.13 has no 12.4 build; 12.6 runs on a 12.4 driver by minor-version compatibility
    assert (
        "fix: pip install --force-reinstall torch==2.13.0"
        " --index-url https://download.pytorch.org/whl/cu126"
    ) in done.stdout
    assert "NVIDIA L4 (sm_89)" in done.stdout  # the bug-report block
