"""Samples/s at 1 and 2 processes: what `torchrun --nproc-per-node 2` buys on this machine.

The same run (digits, an MLP 64-512-512-10, AdamW, no validation or checkpoints, so that only
training steps are timed) at the same global batch: one process at batch 2B, and two processes
at batch B each under torchrun, with DDP and with FSDP2. Each process uses one thread (torchrun's
default), so the 1-process/1-thread row is the unit a second process should double; the
1-process/2-threads row is what one process gets from the whole machine. Throughput is the
median of the samples/s the run itself logs (`metrics.jsonl`, every 5 steps, epochs after the
first), the variants interleaved (order rotated each repeat). Speed-up is against one 1-thread
process; efficiency = speed-up / cores used (processes x threads).

    python benchmarks/scaling.py [--repeats 3] [--batch 64] [--epochs 6] [--json PATH]

On a GPU machine (`--gpus N`) the rows are 1..N processes, one GPU each (nccl).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CONFIG = """
name: scaling
data: {{source: digits, val_fraction: 0, standardize: true}}
model: {{name: mlp, kwargs: {{hidden: [512, 512]}}}}
optim: {{name: adamw, lr: 0.001}}
schedule: {{name: constant}}
train: {{epochs: {epochs}, batch_size: {batch}, seed: 0, device: {device}, distributed: {kind}}}
checkpoint: {{enabled: false}}
log: {{progress: off, every_n_steps: 5}}
"""


def run_variant(*, procs: int, threads: int, kind: str, batch: int, epochs: int, device: str) -> float:
    """One training run; the median samples/s it logged after its first epoch."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "scaling.yaml"
        config.write_text(CONFIG.format(epochs=epochs, batch=batch, device=device, kind=kind))
        launcher = ([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(procs)]
                    if procs > 1 or kind != "none" else [sys.executable])
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        subprocess.run([*launcher, "-m", "torchwise", "train", str(config), "--run-dir", tmp, "--name", "run"],
                       check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        records = [json.loads(line) for line in (Path(tmp) / "run" / "metrics.jsonl").read_text().splitlines()]
    speeds = [r["samples_per_second"] for r in records if r.get("split") == "train" and r["epoch"] >= 1]
    return statistics.median(speeds)


def variants(args: argparse.Namespace) -> dict[str, dict]:
    if args.gpus:
        return {f"{n} GPU{'s' if n > 1 else ''}, DDP": dict(procs=n, threads=1, kind="ddp" if n > 1 else "none",
                                                           batch=args.batch * args.gpus // n, device="cuda")
                for n in range(1, args.gpus + 1)}
    big = args.batch * 2
    return {
        "1 process, 1 thread": dict(procs=1, threads=1, kind="none", batch=big, device="cpu"),
        "1 process, 2 threads": dict(procs=1, threads=2, kind="none", batch=big, device="cpu"),
        "2 processes, DDP": dict(procs=2, threads=1, kind="ddp", batch=args.batch, device="cpu"),
        "2 processes, FSDP2": dict(procs=2, threads=1, kind="fsdp", batch=args.batch, device="cpu"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64, help="per-process batch of the 2-process runs")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--gpus", type=int, default=0, help="on a GPU machine: 1..N processes, one GPU each")
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/scaling.json"))
    args = parser.parse_args()
    table = variants(args)
    names = list(table)
    speeds: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(args.repeats):
        for name in names[repeat % len(names):] + names[: repeat % len(names)]:
            speeds[name].append(run_variant(**table[name], epochs=args.epochs))
    medians = {name: statistics.median(values) for name, values in speeds.items()}
    unit = medians[names[0]]
    machine = (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
               f"Python {platform.python_version()}")
    print(f"scaling: digits, MLP 64-512-512-10, global batch {args.batch * 2 if not args.gpus else args.batch}, "
          f"{args.repeats} interleaved repeats; {machine}")
    print(f"{'variant':<24} {'samples/s':>10} {'speed-up':>9} {'efficiency':>11}")
    rows = []
    for name in names:
        speedup = medians[name] / unit
        efficiency = speedup / (table[name]["procs"] * table[name]["threads"])
        rows.append({"variant": name, "samples_per_second": medians[name], "speedup": speedup,
                     "efficiency": efficiency, "runs": speeds[name], **table[name]})
        print(f"{name:<24} {medians[name]:>10.0f} {speedup:>8.2f}x {efficiency:>10.0%}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": machine, "repeats": args.repeats, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
