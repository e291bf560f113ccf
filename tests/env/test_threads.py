"""The CPU thread choice for a busy machine, and the doctor check that says when threads are the
cause of slowness."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from torchwise.env import threads


@pytest.mark.parametrize(("cores", "load", "default", "expected"), [
    (2, 0.2, 2, 2),    # idle: torch's default stands
    (2, 1.0, 2, 1),    # one other busy process: the one free core
    (2, 6.8, 2, 1),    # overloaded: never fewer than one
    (16, 3.4, 8, 8),   # never more than torch's default (its physical cores)
    (16, 11.6, 8, 4),
])
def test_pick_threads(cores, load, default, expected):
    assert threads.pick_threads(cores=cores, load=load, default=default) == expected


@pytest.fixture
def busy(monkeypatch):
    """A 2-core machine at load 3 with torch at 2 threads; the thread count is put back after."""
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(threads, "load_average", lambda: 3.0)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_a_busy_machine_gets_one_thread_unless_the_user_chose(busy, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    choice = threads.choose_cpu_threads()
    assert (choice.threads, choice.default, torch.get_num_threads()) == (1, 2, 1)
    assert choice.message() == ("cpu threads: 1 of torch's 2, since the load (3.0 on 2 cores) leaves no more "
                                "free; OMP_NUM_THREADS=N sets it")
    torch.set_num_threads(2)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert threads.choose_cpu_threads() is None
    assert torch.get_num_threads() == 2


def test_doctor_warns_when_omp_num_threads_asks_for_busy_cores(busy, monkeypatch, make_facts):
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    finding = threads.check_cpu_threads(make_facts())
    assert (finding.id, finding.level) == ("cpu-threads", "warn")
    assert finding.summary == ("torch uses 2 threads on 2 cores, load 3.0 (no core free): "
                               "OMP_NUM_THREADS=2 asks for more threads than that")
    assert finding.fix.startswith("OMP_NUM_THREADS=1 ")


def test_doctor_notes_the_choice_train_makes_when_nothing_is_set(busy, monkeypatch, make_facts):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    finding = threads.check_cpu_threads(make_facts())
    assert finding.level == "info"
    assert "torchwise train uses 1 thread " in finding.detail
    assert finding.fix == "in your own scripts: torch.set_num_threads(1) (or OMP_NUM_THREADS=1)"


def test_an_idle_machine_is_ok(monkeypatch, make_facts):
    monkeypatch.setattr(threads, "load_average", lambda: 0.1)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: torch.get_num_threads())
    assert threads.check_cpu_threads(make_facts()).level == "ok"


def test_the_cli_says_when_it_departs_from_torchs_default(tmp_path):
    """A subprocess on this machine with no OMP_NUM_THREADS: the line appears exactly when the
    choice differs from torch's default, and the run records the count it used."""
    import json
    import os
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-m", "torchwise", "train", "examples/digits.yaml", "train.epochs=1",
                          "--run-dir", str(tmp_path), "--quiet"], cwd=Path(__file__).resolve().parents[2],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    used = json.loads((tmp_path / "digits/env.json").read_text())["threads"]
    default = int(subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                                 capture_output=True, text=True, env=env, check=True).stdout)
    said = [line for line in out.stderr.splitlines() if line.startswith("cpu threads: ")]
    if used == default:
        assert said == []
    else:
        assert len(said) == 1 and said[0].startswith(f"cpu threads: {used} of torch's {default}, since the load")
