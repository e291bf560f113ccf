"""Under torchrun (2 processes, gloo on CPU): each rank draws its own dropout masks and a resume
continues every rank's stream; start-up interrupts and failures end every rank and say why."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import torch
from tests.train.test_distributed import TORCHRUN_SIGNALLED, finish, torchrun, wait_for_step, weights

from torchwise.runs.folder import read_jsonl

pytestmark = pytest.mark.distributed

# A model whose dropout writes the hash of each step's mask, one file per rank.
MASKED_MODEL = '''
import hashlib, os
from pathlib import Path
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden, self.drop, self.out = nn.Linear(64, 32), nn.Dropout(0.3), nn.Linear(32, 10)

    def forward(self, x):
        h = self.drop(torch.relu(self.hidden(x)))
        if self.training and torch.is_grad_enabled():  # a training step, not preflight's check
            mask = (h == 0).numpy().tobytes()
            log = Path(__file__).with_name(f"masks-{os.environ.get('RANK', '0')}.log")
            with log.open("a") as f:
                f.write(hashlib.sha256(mask).hexdigest()[:16] + "\\n")
        return self.out(h)
'''

CONFIG = """
name: masked
data: {source: digits, val_fraction: 0.2, standardize: true}
model: {target: "masked:Net"}
optim: {name: adamw, lr: 0.003}
train: {epochs: 2, batch_size: 16, seed: 0, monitor: val_accuracy}
log: {progress: plain, every_n_steps: 1}
"""


def masks(folder: Path, rank: int) -> list[str]:
    log = folder / f"masks-{rank}.log"
    lines = log.read_text().split()
    log.unlink()
    return lines


def test_each_rank_draws_its_own_dropout_masks_and_resume_continues_every_ranks_stream(tmp_path):
    (tmp_path / "masked.py").write_text(MASKED_MODEL)
    config = tmp_path / "masked.yaml"
    config.write_text(CONFIG)
    runs = tmp_path / "runs"
    code, output = finish(torchrun(2, "train", str(config), "--run-dir", str(runs), "--name", "whole"))
    assert code == 0, output
    rank0, rank1 = masks(tmp_path, 0), masks(tmp_path, 1)
    assert len(rank0) == len(rank1) == 90  # 2 epochs of 45 steps
    assert not set(rank0) & set(rank1)  # no step of rank 1 reuses a mask of rank 0
    saved = json.loads((runs / "whole" / "checkpoints" / "last" / "meta.json").read_text())
    assert saved["world_size"] == 2

    process = torchrun(2, "train", str(config), "--run-dir", str(runs), "--name", "stopped")
    wait_for_step(runs / "stopped", 10, process)  # mid-epoch 1
    os.killpg(process.pid, signal.SIGINT)
    code, output = finish(process)
    assert code == TORCHRUN_SIGNALLED, output
    stopped_at = json.loads((runs / "stopped" / "summary.json").read_text())["steps"]
    code, output = finish(torchrun(2, "resume", str(runs / "stopped")))
    assert code == 0, output
    # Every rank took up its own stream where it stopped: the masks after the resume are the
    # uninterrupted run's, rank by rank, and so are the weights, bit for bit.
    assert masks(tmp_path, 0)[-(90 - stopped_at):] == rank0[stopped_at:]
    assert masks(tmp_path, 1)[-(90 - stopped_at):] == rank1[stopped_at:]
    whole, resumed = weights(runs / "whole"), weights(runs / "stopped")
    for key in whole:
        assert torch.equal(resumed[key], whole[key]), key
    events = [e["event"] for e in read_jsonl(runs / "stopped" / "events.jsonl")]
    assert "rng_streams_started" not in events


# A model that takes 2 s to build: a signal sent while both ranks build it lands in start-up.
SLOW_START_MODEL = '''
import os, time
from pathlib import Path
from torch import nn


class Net(nn.Sequential):
    def __init__(self):
        Path(__file__).with_name(f"building-{os.environ['RANK']}").touch()
        time.sleep(2)
        super().__init__(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 10))
'''

SLOW_START_CONFIG = CONFIG.replace('"masked:Net"', '"slowstart:Net"').replace(
    "seed: 0,", "seed: 0, collective_timeout_s: 60,")


def rank_pids(process) -> dict[int, int]:
    """torchrun's workers by their RANK."""
    import subprocess
    import time

    deadline = time.time() + 60
    while time.time() < deadline:
        children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        ranks = {}
        for pid in children:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            rank = next((v.split(b"=")[1] for v in environ if v.startswith(b"RANK=")), None)
            if rank is not None:
                ranks[int(rank)] = int(pid)
        if len(ranks) == 2:
            return ranks
        time.sleep(0.05)
    raise AssertionError("torchrun did not start 2 workers")


@pytest.mark.parametrize("rank", [1, 0])
def test_a_sigint_to_one_rank_during_start_up_ends_both_promptly_as_interrupted(tmp_path, rank):
    import time

    (tmp_path / "slowstart.py").write_text(SLOW_START_MODEL)
    config = tmp_path / "slow.yaml"
    config.write_text(SLOW_START_CONFIG)
    run = tmp_path / "runs" / "slow"
    process = torchrun(2, "train", str(config), "--run-dir", str(tmp_path / "runs"), "--name", "slow")
    pids = rank_pids(process)
    deadline = time.time() + 120
    while not all((tmp_path / f"building-{r}").is_file() for r in (0, 1)) and time.time() < deadline:
        time.sleep(0.02)
    os.kill(pids[rank], signal.SIGINT)
    signalled = time.time()
    code, output = finish(process, timeout=120)
    # Before, the signalled rank waited in the closing barrier while the other was in DDP's set-up,
    # until the collective timeout (60 s here). Now both finish start-up and stop together; the
    # bound is the timeout, not a figure a loaded machine could break (see docs/resume.md).
    assert time.time() - signalled < 60, output
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["status"], summary["steps"]) == ("interrupted", 0), output
    assert summary["reason"] == "stopped by SIGINT during start-up, before the first step"
    assert "second signal" not in output and "KeyboardInterrupt" not in output, output
    assert not (run / "checkpoints" / "last").exists()
    events = [e for e in read_jsonl(run / "events.jsonl") if e["event"] == "interrupted"]
    assert [(e["step"], e["signal"]) for e in events] == [(0, "SIGINT")]


# A model that raises in its third training forward, on the rank that FAIL_RANK names.
FAILING_MODEL = '''
import os
from torch import nn


class Net(nn.Sequential):
    def __init__(self):
        super().__init__(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 10))
        self.forwards = 0

    def forward(self, x):
        if self.training:
            self.forwards += 1
            if self.forwards == 3 and os.environ["RANK"] == os.environ["FAIL_RANK"]:
                raise ValueError(f"bad batch on rank {os.environ['RANK']}")
        return super().forward(x)
'''


@pytest.mark.parametrize("rank", [1, 0])
def test_when_one_rank_fails_its_cause_is_printed_and_in_the_summary(tmp_path, rank):
    (tmp_path / "failing.py").write_text(FAILING_MODEL)
    config = tmp_path / "fail.yaml"
    config.write_text(CONFIG.replace('"masked:Net"', '"failing:Net"'))
    process = torchrun(2, "train", str(config), "--run-dir", str(tmp_path / "runs"), "--name", "fail",
                       env={**os.environ, "FAIL_RANK": str(rank)})
    code, output = finish(process)
    assert code != 0
    cause = f"bad batch on rank {rank}"
    assert cause in output, output  # printed by whichever rank got to say it first
    assert "see that rank's error above" not in output
    summary = json.loads((tmp_path / "runs" / "fail" / "summary.json").read_text())
    assert summary["status"] == "failed" and cause in summary["reason"], summary
    if rank == 1:  # rank 0 wrote the summary from rank 1's note
        assert summary["reason"].startswith(f"rank 1/2 failed first: ValueError: {cause}")


def test_a_locked_run_under_torchrun_is_refused_once_before_its_batch_size_is_checked(tmp_path):
    from torchwise.runs.lock import RunLock

    config = tmp_path / "digits.yaml"
    config.write_text(CONFIG.replace('{target: "masked:Net"}', "{name: mlp, kwargs: {hidden: [16]}}")
                      .replace("epochs: 2", "epochs: 1"))
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "torchwise", "train", str(config), "--run-dir", str(tmp_path / "runs"),
                           "-q"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    run = tmp_path / "runs" / "masked"
    lock = RunLock.acquire(run)  # another process "trains" it
    try:
        # batch 16 per process under 2 would change the global batch: a refusal too, but the lock comes first
        code, output = finish(torchrun(2, "resume", str(run), "train.epochs=2"))
    finally:
        lock.release()
    assert code != 0
    errors = [line for line in output.splitlines() if line.startswith(("error:", "hint:"))]
    assert errors == [f"error: run folder {run} is in use by another process (pid {os.getpid()})",
                      "hint: wait for that run to finish (or stop it with Ctrl-C / kill), then resume"], output
    assert "did not complete" not in output and "global batch" not in output
