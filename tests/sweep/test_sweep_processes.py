"""Sweeps as processes: kill -9 mid-trial and start again; --jobs 2; two sweep processes on one
RDB storage. Each asserts from the Optuna storage itself (slow: several processes, seconds each)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from torchwise.runs.folder import read_jsonl
from torchwise.runs.reader import read_run
from torchwise.sweep.record import read_spec
from torchwise.sweep.storage import open_study

pytestmark = pytest.mark.slow

LONGER = ["train.epochs=12", "data.kwargs={n: 1200}", "checkpoint.every_n_steps=20"]  # ~1-3 s a trial


def sweep_command(config: Path, space: Path, runs: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "torchwise", "sweep", str(config), *LONGER, "--space", str(space),
            "--run-dir", str(runs), "--pruner", "none", "-q", *extra]


def trials_of(sweep_dir: Path) -> list:
    spec = read_spec(sweep_dir)
    return open_study(url=spec.storage, name=spec.study).get_trials()


def distinct_complete(trials: list) -> int:
    return len({json.dumps(t.params, sort_keys=True) for t in trials if t.state.name == "COMPLETE"})


def running_trial_with_checkpoint(sweep_dir: Path) -> Path | None:
    for folder in sorted(sweep_dir.glob("trial-*")):
        try:
            summary = json.loads((folder / "summary.json").read_text())
        except (OSError, ValueError):
            continue
        if summary.get("status") == "running" and (folder / "checkpoints" / "last" / "meta.json").is_file():
            return folder
    return None


def test_kill_9_mid_trial_then_restart_ends_with_exactly_n(tiny, tmp_path):
    config, space = tiny
    runs, sweep_dir = tmp_path / "runs", tmp_path / "runs" / "tiny-sweep"
    command = sweep_command(config, space, runs, "--trials", "4")
    first = subprocess.Popen(command, cwd=tmp_path, start_new_session=True)
    deadline = time.monotonic() + 300
    victim = None
    while victim is None and first.poll() is None and time.monotonic() < deadline:
        victim = running_trial_with_checkpoint(sweep_dir) if sweep_dir.is_dir() else None
        time.sleep(0.05)
    assert victim is not None, "no trial was caught mid-run"
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert read_run(victim).status == "killed"  # readable: the reader says what happened

    second = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    trials = trials_of(sweep_dir)
    states = [t.state.name for t in trials]
    assert states.count("COMPLETE") + states.count("PRUNED") == 4
    assert distinct_complete(trials) == 4  # the restart repeated no parameter set
    (lost,) = [t for t in trials if t.state.name == "FAIL"]
    (retry,) = [t for t in trials if t.user_attrs.get("retry_of") == lost.number]
    assert retry.params == lost.params and retry.state.name == "COMPLETE"
    assert retry.user_attrs["run_dir"] == str(victim.resolve())  # resumed in its own folder
    resumes = [e for e in read_jsonl(victim / "events.jsonl") if e["event"] == "resume"]
    assert len(resumes) == 1 and resumes[0]["step"] > 0
    for folder in sweep_dir.glob("trial-*"):  # every trial's folder reads, and says completed
        assert read_run(folder).status == "completed", folder


def overlapping(trials: list) -> list[tuple[int, int]]:
    spans = [(t.number, t.datetime_start, t.datetime_complete) for t in trials if t.state.name == "COMPLETE"]
    return [(a, b) for a, start_a, end_a in spans for b, start_b, end_b in spans
            if a < b and start_a < end_b and start_b < end_a]


def test_jobs_2_runs_two_trials_at_once_on_distinct_parameters(tiny, tmp_path):
    config, space = tiny
    runs = tmp_path / "runs"
    out = subprocess.run(sweep_command(config, space, runs, "--trials", "4", "--jobs", "2"), cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    trials = trials_of(runs / "tiny-sweep")
    assert [t.state.name for t in trials] == ["COMPLETE"] * 4 and distinct_complete(trials) == 4
    pairs = overlapping(trials)
    assert pairs, [(t.number, t.datetime_start, t.datetime_complete) for t in trials]
    workers = {t.user_attrs["worker"] for t in trials}
    assert len(workers) == 2  # two worker processes shared the study
    for a, b in pairs:
        assert trials[a].params != trials[b].params


def test_two_sweep_processes_on_one_storage_url_share_one_study(tiny, tmp_path):
    config, space = tiny
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    both = [subprocess.Popen(sweep_command(config, space, tmp_path / f"machine-{i}", "--trials", "4",
                                           "--storage", url, "--name", "shared"),
                             cwd=tmp_path, stderr=subprocess.PIPE, text=True) for i in (1, 2)]
    for process in both:
        assert process.wait(timeout=600) == 0, process.stderr.read()
    study = open_study(url=url, name="shared")
    trials = study.get_trials()
    assert sum(t.state.name == "COMPLETE" for t in trials) == 4 and distinct_complete(trials) == 4
    folders = {Path(t.user_attrs["run_dir"]).parent.parent.name for t in trials if t.state.name == "COMPLETE"}
    assert folders == {"machine-1", "machine-2"}  # each process ran trials of the one study
    assert overlapping(trials)
