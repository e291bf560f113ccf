"""The CPU thread choice for a busy machine, and the doctor check that says when threads are the
cause of slowness."""

from __future__ import annotations

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
