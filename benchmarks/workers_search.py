"""The workers search against the full grid, on a dataset whose __getitem__ is costly.

Each sample waits ``--cost-ms`` (a sleep: reading and decoding a file, as image datasets do) in
__getitem__, and the model is small, so the run is data-bound. The script times every
candidate of the grid in full, then runs `tune workers`' search, interleaved ``--repeats``
times, and prints both: the pick's throughput as a share of the grid's best, and the search's
time as a share of the grid's.

    python benchmarks/workers_search.py [--max-workers 8] [--cost-ms 2] [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
from torch.utils.data import Dataset


class SlowSamples(Dataset):
    """Costly __getitem__: a fixed wait per sample, then a small tensor."""

    def __init__(self, n: int = 4096, cost_ms: float = 2.0) -> None:
        self.n, self.cost = n, cost_ms / 1000
        generator = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 32, generator=generator)
        self.y = torch.randint(0, 4, (n,), generator=generator)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        time.sleep(self.cost)
        return self.x[index], self.y[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-workers", type=int, default=8)
    parser.add_argument("--cost-ms", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "results" / "workers_search.json")
    args = parser.parse_args()
    from torchwise.tune.workers import full_grid, tune_loader
    from torchwise.tune.workload import from_objects

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    work = from_objects(model, SlowSamples(cost_ms=args.cost_ms), config={"train": {"batch_size": 32}})
    rows = []
    for repeat in range(args.repeats):
        started = time.perf_counter()
        grid = full_grid(work, max_workers=args.max_workers)
        grid_seconds = time.perf_counter() - started
        result = tune_loader(work, max_workers=args.max_workers)
        best = max(t.samples_per_second for t in grid)
        at_pick = next(t.samples_per_second for t in grid if t.num_workers == result.num_workers)
        rows.append({"grid": {t.num_workers: round(t.samples_per_second, 1) for t in grid},
                     "grid_seconds": grid_seconds, "search_seconds": result.search_seconds,
                     "pick": result.num_workers, "verdict": result.verdict, "pick_share_of_best": at_pick / best,
                     "time_share": result.search_seconds / grid_seconds,
                     "measured": [t.num_workers for t in result.trials],
                     "step_samples_per_second": result.step_samples_per_second})
        print(f"repeat {repeat}: grid samples/s {rows[-1]['grid']} in {grid_seconds:.2f} s; search measured "
              f"{rows[-1]['measured']} in {result.search_seconds:.2f} s -> num_workers={result.num_workers} "
              f"({result.verdict}, model {result.step_samples_per_second:,.0f} samples/s)", flush=True)
    share = statistics.median(r["pick_share_of_best"] for r in rows)
    time_share = statistics.median(r["time_share"] for r in rows)
    print(f"median over {len(rows)}: the pick loads at {share:.1%} of the grid's best, "
          f"found in {time_share:.1%} of the grid's time")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"rows": rows, "pick_share_of_best": share, "time_share": time_share},
                                    indent=2) + "\n")


if __name__ == "__main__":
    main()
