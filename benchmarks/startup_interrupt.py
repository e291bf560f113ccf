"""How long two ranks take to end after a SIGINT reaches one of them during start-up.

Two processes under torchrun (gloo) train a model that takes 2 s to build, the run of
`tests/train/test_distributed_faults.py`; once both ranks are building it, one rank gets a
SIGINT. The time from the signal until torchrun has exited is printed per signalled rank, with
the status and reason the run recorded. Before the fix the signalled rank waited in a barrier
the other could not reach, for `train.collective_timeout_s` (60 s in that config, 600 s by
default). The test bounds the time by that timeout, not by these seconds, which a busy machine
stretches.

    python benchmarks/startup_interrupt.py [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.train.test_distributed import finish, torchrun  # noqa: E402
from tests.train.test_distributed_faults import SLOW_START_CONFIG, SLOW_START_MODEL, rank_pids  # noqa: E402


def interrupt_at_start_up(rank: int) -> dict:
    """One run: SIGINT to ``rank`` while both ranks build the model; seconds until both ended."""
    folder = Path(tempfile.mkdtemp(prefix="tw-startup-"))
    (folder / "slowstart.py").write_text(SLOW_START_MODEL)
    (folder / "slow.yaml").write_text(SLOW_START_CONFIG)
    process = torchrun(2, "train", str(folder / "slow.yaml"), "--run-dir", str(folder / "runs"), "--name", "slow")
    pids = rank_pids(process)
    while not all((folder / f"building-{r}").is_file() for r in (0, 1)):
        time.sleep(0.02)
    os.kill(pids[rank], signal.SIGINT)
    signalled = time.perf_counter()
    finish(process, timeout=120)
    seconds = time.perf_counter() - signalled
    summary = json.loads((folder / "runs" / "slow" / "summary.json").read_text())
    return {"rank": rank, "seconds": seconds, "status": summary["status"], "reason": summary["reason"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "startup_interrupt.json")
    args = parser.parse_args()
    runs = [interrupt_at_start_up(rank) for _ in range(args.repeats) for rank in (1, 0)]
    load = os.getloadavg()[0]
    for run in runs:
        print(f"SIGINT to rank {run['rank']}: both ranks ended {run['seconds']:.1f} s later; "
              f"{run['status']}: {run['reason']}")
    median = statistics.median(run["seconds"] for run in runs)
    print(f"median {median:.1f} s over {len(runs)} runs (1-minute load {load:.1f} at the end)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"runs": runs, "median_s": median, "load": load}, indent=2) + "\n")


if __name__ == "__main__":
    main()
