from __future__ import annotations

import shutil
from collections import namedtuple

import pytest

from torchwise.env import system

GIB = 1024**3
MIB = 1024**2


def test_two_worker_dataloader_really_runs(make_facts):
    finding = system.check_dataloader_workers(make_facts())
    assert finding.level == "ok"
    assert "start method" in finding.summary


def test_killed_workers_fail_with_the_shm_fix(make_facts, monkeypatch):
    def killed(torch, num_workers):
        raise RuntimeError(
            "DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that"
            " dataloader's workers are out of shared memory."
        )

    monkeypatch.setattr(system, "run_loader", killed)
    finding = system.check_dataloader_workers(make_facts())
    assert (finding.id, finding.level) == ("dataloader-workers", "fail")
    assert "pid 4242" in finding.summary
    assert "--shm-size=8g" in finding.fix


@pytest.mark.skipif(system.platform.system() != "Linux", reason="/dev/shm is Linux only")
def test_docker_default_shm_warns(make_facts, monkeypatch):
    monkeypatch.setattr(system, "shm_size_bytes", lambda: 64 * MIB)
    finding = system.check_shm_size(make_facts())
    assert (finding.id, finding.level) == ("shm-size", "warn")
    assert finding.summary == "/dev/shm is only 64 MiB"
    assert finding.fix.startswith("docker run --shm-size=8g")


@pytest.mark.skipif(system.platform.system() != "Linux", reason="/dev/shm is Linux only")
def test_large_shm_is_ok(make_facts, monkeypatch):
    monkeypatch.setattr(system, "shm_size_bytes", lambda: 8 * GIB)
    assert system.check_shm_size(make_facts()).summary == "/dev/shm is 8.0 GiB"


def test_low_open_files_limit_warns(make_facts, monkeypatch):
    monkeypatch.setattr(system, "open_files_limit", lambda: 256)
    finding = system.check_open_files(make_facts())
    assert (finding.id, finding.level) == ("open-files", "warn")
    assert finding.fix.startswith("ulimit -n 4096")


Usage = namedtuple("Usage", "total used free")


@pytest.mark.parametrize(
    ("free", "level"), [(512 * MIB, "fail"), (3 * GIB, "warn"), (50 * GIB, "ok")]
)
def test_disk_space_where_runs_are_written(make_facts, tmp_path, monkeypatch, free, level):
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(100 * GIB, 0, free))
    finding = system.check_disk_space(make_facts(runs_dir=tmp_path / "runs" / "not-yet"))
    assert (finding.id, finding.level) == ("disk-space", level)
    assert str(tmp_path) in finding.summary


def test_little_available_memory_warns(make_facts, monkeypatch):
    monkeypatch.setattr(system, "memory_bytes", lambda: (16 * GIB, 1 * GIB))
    finding = system.check_memory(make_facts())
    assert (finding.id, finding.level, finding.summary) == (
        "memory",
        "warn",
        "16.0 GiB RAM, 1.0 GiB available",
    )
