"""What a run records: ISO times with the zone, wall time over resumed segments, a wall time on
every metrics line, data-wait time per step, and the folder lock held by one process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from datetime import datetime

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from torch.utils.data import Dataset

import torchwise
from torchwise.errors import RunLocked
from torchwise.runs.folder import RunFolder, read_jsonl
from torchwise.runs.lock import RunLock, lock_held
from torchwise.runs.record import earlier_segments, iso_time


def test_summary_times_are_iso_with_zone_and_every_metrics_line_has_its_time(tmp_path):
    before = time.time()
    result = torchwise.fit(torch.nn.Linear(6, 3), tiny_classification(), config=quiet_config(train={"epochs": 2}),
                           runs_dir=tmp_path)
    summary = json.loads((result.run_dir / "summary.json").read_text())
    started = datetime.fromisoformat(summary["started"])
    finished = datetime.fromisoformat(summary["finished"])
    assert started.tzinfo is not None and finished.tzinfo is not None
    assert before - 0.01 <= started.timestamp() <= finished.timestamp() <= time.time()
    assert summary["wall_seconds"] == pytest.approx(finished.timestamp() - started.timestamp(), abs=2e-3)
    records = read_jsonl(result.run_dir / "metrics.jsonl")
    # ISO times keep milliseconds (truncated), line times are rounded to them: 2 ms of slack.
    assert records and all(started.timestamp() <= r["time"] <= finished.timestamp() + 2e-3 for r in records)
    train_lines = [r for r in records if r["split"] == "train"]
    assert all(0 <= r["data_wait"] <= r["step_time"] for r in train_lines)


class SlowData(Dataset):
    """A `__getitem__` that sleeps: the loader, not the model, sets the pace."""

    def __init__(self) -> None:
        self.data = tiny_classification(n=32)

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        time.sleep(SLEEP)
        return self.data[index]


SLEEP = 0.06  # seconds per sample


def test_data_wait_is_most_of_the_step_when_getitem_is_slow(tmp_path):
    result = torchwise.fit(torch.nn.Linear(6, 3), SlowData(),
                           config=quiet_config(train={"epochs": 1, "batch_size": 8}), runs_dir=tmp_path)
    lines = [r for r in read_jsonl(result.run_dir / "metrics.jsonl") if r["split"] == "train"]
    # No workers (the default): each step waits at least its 8 samples' sleep, however busy the
    # machine; and 480 ms of sleep against a 6->3 linear layer's step of a few milliseconds is
    # most of the step unless load stretches that step a hundredfold.
    assert len(lines) == 4 and all(8 * SLEEP <= r["data_wait"] <= r["step_time"] for r in lines), lines
    share = sum(r["data_wait"] for r in lines) / sum(r["step_time"] for r in lines)
    assert share > 0.5, lines


def test_resumed_run_sums_the_wall_time_of_its_segments(tmp_path):
    cfg = quiet_config(train={"max_steps": 4, "epochs": 100, "batch_size": 10}, checkpoint={"enabled": True})
    first = torchwise.fit(torch.nn.Linear(6, 3), tiny_classification(), config=cfg, runs_dir=tmp_path)
    second = torchwise.fit(torch.nn.Linear(6, 3), tiny_classification(), resume=first.run_dir,
                           overrides=["train.max_steps=8"])
    summary = json.loads((second.run_dir / "summary.json").read_text())
    segments = summary["segments"]
    assert [s["status"] for s in segments] == ["completed", "completed"]
    assert summary["started"] == segments[0]["started"] and summary["finished"] == segments[1]["finished"]
    assert summary["wall_seconds"] == pytest.approx(sum(s["wall_seconds"] for s in segments), abs=1e-3)
    assert summary["wall_seconds"] > segments[1]["wall_seconds"]
    assert summary["steps"] == 8


def test_a_killed_segment_ends_at_its_last_written_line(tmp_path):
    (tmp_path / "summary.json").write_text(json.dumps({
        "status": "running", "segments": [{"started": iso_time(1000.0), "finished": None,
                                           "status": "running", "wall_seconds": None}]}))
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "time": 1010.5}\n{"step": 2, "time": 1012.25}\n{"ste')
    (tmp_path / "events.jsonl").write_text('{"event": "resume", "time": 1001.0}\n')
    (segment,) = earlier_segments(tmp_path)
    assert segment["status"] == "killed" and segment["wall_seconds"] == pytest.approx(12.25)
    assert datetime.fromisoformat(segment["finished"]).timestamp() == pytest.approx(1012.25)


def test_the_lock_is_exclusive_and_free_after_release(tmp_path):
    lock = RunLock.acquire(tmp_path)
    with pytest.raises(RunLocked) as caught:
        RunLock.acquire(tmp_path)  # a second open file description conflicts, even in one process
    assert "in use by another process" in caught.value.message and "resume" in caught.value.hint
    lock.release()
    assert not lock_held(tmp_path)
    RunLock.acquire(tmp_path).release()


HOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from torchwise.runs.folder import RunFolder
    run = RunFolder(Path(sys.argv[1]))
    print("holding", flush=True)
    sys.stdin.read()  # hold until the test closes stdin or kills us
""")


def test_a_second_process_cannot_resume_a_run_another_process_holds(tmp_path):
    config = tmp_path / "held.yaml"
    config.write_text("data: {source: digits}\nmodel: {name: linear}\ntrain: {max_steps: 3, batch_size: 32}\n"
                      "log: {progress: off}\n")
    trained = subprocess.run([sys.executable, "-m", "torchwise", "train", str(config), "--run-dir", str(tmp_path)],
                             capture_output=True, text=True, timeout=300)
    assert trained.returncode == 0, trained.stderr
    run_dir = tmp_path / "held"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        assert lock_held(run_dir)
        before = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()}
        out = subprocess.run([sys.executable, "-m", "torchwise", "resume", str(run_dir), "train.max_steps=6"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith(f"error: run folder {run_dir} is in use by another process (pid {holder.pid})")
        assert "hint: wait for that run to finish" in out.stderr and "Traceback" not in out.stderr
        assert {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()} == before  # nothing changed
    finally:
        holder.kill()  # SIGKILL: the OS releases the lock, no clean-up code runs
        holder.wait()
    assert not lock_held(run_dir)
    with pytest.raises(RunLocked):
        with_lock = RunFolder(run_dir)
        RunFolder(run_dir)
    with_lock.close()
