"""The digits sweep: 20 trials over lr, weight decay and width (examples/digits-space.yaml),
first with every trial run to its end (`--pruner none`), then with the median pruner, seeds fixed
(TPE seed 0, train.seed 0). Prints each sweep's best validation accuracy and the epochs its
trials trained in total, and the two figures the sweep promises: the best accuracy, and the
pruned sweep's best and share of the epochs. The two sweeps run side by side, one process each.
With ``--runs-dir`` they live there, and a second call continues them (a sweep restarts).

    python benchmarks/sweep.py [--trials 20] [--runs-dir DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(pruner: str, *, trials: int, runs_dir: Path) -> dict:
    import torchwise
    from torchwise.runs.reader import find_runs, read_run

    started = time.perf_counter()
    result = torchwise.sweep(ROOT / "examples" / "digits.yaml", ROOT / "examples" / "digits-space.yaml",
                             trials=trials, pruner=pruner, seed=0, runs_dir=runs_dir, name=f"digits-{pruner}",
                             quiet=True)
    runs = [read_run(path) for path in find_runs(result.sweep_dir)]
    return {"pruner": pruner, "best_val_accuracy": result.best["value"], "best_params": result.best["params"],
            "epochs": sum(r.summary.get("epochs") or 0 for r in runs), "counts": result.counts,
            "statuses": [r.status for r in runs], "seconds": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/sweep.json"))
    parser.add_argument("--runs-dir", type=Path, default=None, help="keep the sweeps here (default: a temp folder)")
    args = parser.parse_args()
    from concurrent.futures import ProcessPoolExecutor

    with tempfile.TemporaryDirectory() as temp, ProcessPoolExecutor(2) as pool:
        folder = args.runs_dir or Path(temp)
        futures = [pool.submit(run, pruner, trials=args.trials, runs_dir=folder) for pruner in ("none", "median")]
        full, pruned = (future.result() for future in futures)
    print(f"{'pruner':<8} {'best val acc':>12} {'epochs':>7} {'pruned':>7} {'seconds':>8}")
    for row in (full, pruned):
        print(f"{row['pruner']:<8} {row['best_val_accuracy'] * 100:>11.2f}% {row['epochs']:>7} "
              f"{row['counts'].get('pruned', 0):>7} {row['seconds']:>8.1f}")
    gap = (full["best_val_accuracy"] - pruned["best_val_accuracy"]) * 100
    share = pruned["epochs"] / full["epochs"]
    print(f"\nbest val accuracy, {args.trials} trials: {full['best_val_accuracy'] * 100:.2f}% "
          f"({'>=' if full['best_val_accuracy'] >= 0.98 else 'BELOW'} 98%)")
    print(f"median pruner: {pruned['best_val_accuracy'] * 100:.2f}%, {gap:+.2f} points from it "
          f"({'within' if gap <= 0.5 else 'NOT within'} 0.5), in {share:.0%} of the epochs "
          f"({'<=' if share <= 0.6 else 'ABOVE'} 60%)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": platform.platform(), "trials": args.trials, "full": full,
                                     "median": pruned, "gap_points": gap, "epoch_share": share}, indent=2))


if __name__ == "__main__":
    main()
