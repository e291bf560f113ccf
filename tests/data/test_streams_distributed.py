"""A stream under torchrun (2 processes, gloo on CPU): with `torchwise.stream_part()` every worker
of every process reads its own share, each row once per epoch; processes whose shares run out
at different steps stop their epoch together instead of hanging."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchwise.runs.folder import read_jsonl

pytestmark = pytest.mark.distributed

ROWS = 120

SCRIPT = """
import json, os, signal, sys
import torch
from torch import nn
from torch.utils.data import IterableDataset
import torchwise

ROWS, UNEVEN = {rows}, {uneven}
MODE = sys.argv[2] if len(sys.argv) > 2 else "whole"  # "stop": rank 0 gets a Ctrl-C at its 3rd step


class Rows(IterableDataset):
    # Row i: features (i, noise...), label i % 3. Rank 1 drops its rows from 80 on when UNEVEN.
    def __iter__(self):
        part, parts = torchwise.stream_part()
        rank = int(os.environ["RANK"])
        for i in range(part, ROWS, parts):
            if UNEVEN and rank == 1 and i >= ROWS - 40:
                return
            x = torch.randn(6, generator=torch.Generator().manual_seed(i))
            x[0] = float(i)
            yield x, torch.tensor(i % 3)

    # Stateful (torchdata's protocol): under torchrun its place is rank 0's alone, so not restored.
    def state_dict(self):
        return {{}}

    def load_state_dict(self, state):
        pass


class Net(nn.Module):
    # Records the rows it trains on (column 0 names the row).
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        self.seen = []

    def forward(self, x):
        if self.training and torch.is_grad_enabled():
            self.seen.extend(int(v) for v in x[:, 0].tolist())
            if MODE == "stop" and os.environ["RANK"] == "0" and len(self.seen) == 30:
                os.kill(os.getpid(), signal.SIGINT)
        return self.body(x / 100)


model = Net()
config = {{"train": {{"epochs": 2, "batch_size": 10}}, "data": {{"num_workers": 2}},
          "schedule": {{"name": "constant"}}, "checkpoint": {{"enabled": MODE != "whole"}},
          "log": {{"progress": "plain", "every_n_steps": 1}}}}
if MODE == "resume":
    result = torchwise.fit(model, Rows(), resume=os.path.join(sys.argv[1], "stream"))
else:
    result = torchwise.fit(model, Rows(), runs_dir=sys.argv[1], name="stream", config=config)
Path = __import__("pathlib").Path
Path(sys.argv[1], f"seen-{{os.environ['RANK']}}.json").write_text(json.dumps(model.seen))
"""


def run_script(tmp_path: Path, *, uneven: bool = False, mode: str = "whole") -> tuple[Path, dict[int, list[int]]]:
    script = tmp_path / "train_stream.py"
    script.write_text(SCRIPT.format(rows=ROWS, uneven=uneven))
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
               str(script), str(tmp_path), mode]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr  # fit returns after a stop too
    seen = {rank: json.loads((tmp_path / f"seen-{rank}.json").read_text()) for rank in (0, 1)}
    return tmp_path / "stream", seen


def test_two_processes_with_two_workers_each_read_every_row_once_per_epoch(tmp_path):
    run, seen = run_script(tmp_path, uneven=False)
    # 4 parts of 30 rows: each process reads 60 rows a pass, 6 batches of 10, so 6 steps an epoch.
    assert len(seen[0]) == len(seen[1]) == 120
    for epoch in (0, 1):
        rows = seen[0][60 * epoch:60 * (epoch + 1)] + seen[1][60 * epoch:60 * (epoch + 1)]
        assert sorted(rows) == list(range(ROWS))
    assert set(seen[0]) == {i for i in range(ROWS) if i % 4 in (0, 1)}  # rank 0: parts 0 and 1
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["status"], summary["steps"], summary["epochs"]) == ("completed", 12, 2)
    steps = [r["step"] for r in read_jsonl(run / "metrics.jsonl") if r["split"] == "train"]
    assert steps == list(range(1, 13))  # rank 0 alone writes the run folder
    events = [e["event"] for e in read_jsonl(run / "events.jsonl")]
    assert "stream_ranks_uneven" not in events and "stream_not_sharded" not in events


def test_processes_whose_streams_run_out_apart_end_the_epoch_together(tmp_path):
    run, seen = run_script(tmp_path, uneven=True)
    # Rank 1 holds 40 rows a pass (2 batches per worker), rank 0 60 (3 per worker): both stop
    # after 4 steps, every epoch, and rank 0's last two batches are not trained on.
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["status"], summary["steps"], summary["epochs"]) == ("completed", 8, 2)
    assert len(seen[0]) == len(seen[1]) == 80
    uneven = [e for e in read_jsonl(run / "events.jsonl") if e["event"] == "stream_ranks_uneven"]
    assert [(e["ranks_with_data"], e["world_size"]) for e in uneven] == [(1, 2), (1, 2)]


def test_a_stream_stopped_under_torchrun_restarts_its_epoch_on_resume_and_says_why(tmp_path):
    pytest.importorskip("torchdata")  # the stateful stream is read through StatefulDataLoader
    run, _ = run_script(tmp_path, mode="stop")  # every rank stops after step 3 of the first epoch's 6
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["status"], summary["steps"]) == ("interrupted", 3)
    meta = json.loads((run / "checkpoints" / "last" / "meta.json").read_text())
    assert meta["step"] == 3
    run, seen = run_script(tmp_path, mode="resume")
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["status"], summary["steps"]) == ("completed", 15)  # 3 + the first epoch again + the second
    assert len(seen[0]) == len(seen[1]) == 120
    restarted = [e for e in read_jsonl(run / "events.jsonl") if e["event"] == "epoch_restarted"]
    assert len(restarted) == 1 and restarted[0]["samples_skipped"] == 60
    assert restarted[0]["hint"] == ("under torchrun each process's place in its stream is not saved, "
                                    "so the epoch restarts")
