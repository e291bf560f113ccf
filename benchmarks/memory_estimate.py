"""The memory estimator against the measured peak of real training steps.

For five models at two batch sizes each: the peak that `tune memory` predicts from two small
probe micro-batches (2 and 4 samples), and the peak measured during a real AdamW step at the
full batch size (on CPU: live tensor storages tracked op by op with a TorchDispatchMode; on
CUDA: torch.cuda.max_memory_allocated). Prints a table and writes JSON.

    python benchmarks/memory_estimate.py [--batch-sizes 32 128] [--device cpu] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import torch
from memory_models import five_models

from torchwise.tune.memory import estimate_workload, measured_peak
from torchwise.tune.workload import from_objects

MIB = 2**20


def cuda_peak(work, batch_size: int) -> int:
    """max_memory_allocated over one real step (after a warm-up step), less what else the process holds."""
    from torchwise.tune.memory import model_state_tensors, optimizer_tensors
    from torchwise.tune.state import preserved
    from torchwise.tune.tracker import storage_bytes
    from torchwise.tune.workload import sample_batch, train_step

    with preserved(work.model, work.optimizer):
        train_step(work, sample_batch(work, batch_size))
        torch.cuda.synchronize()
        # What other objects in this process hold (earlier models, caches) is not this step's.
        ours = storage_bytes([*model_state_tensors(work), *optimizer_tensors(work.optimizer)])
        others = torch.cuda.memory_allocated() - ours
        torch.cuda.reset_peak_memory_stats()
        train_step(work, sample_batch(work, batch_size))
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - others


def run(batch_sizes: list[int], device: str) -> list[dict]:
    rows = []
    config = {"train": {"device": device, "precision": "fp32"}}
    for name, make in five_models().items():
        for batch_size in batch_sizes:
            model, data = make()
            work = from_objects(model, data, config=config)
            estimate = estimate_workload(work, batch_size=batch_size, bf16=False)
            measured = cuda_peak(work, batch_size) if device == "cuda" else measured_peak(work, batch_size)
            error = estimate.predicted_peak_bytes / measured - 1
            rows.append({"model": name, "batch_size": batch_size, "predicted_bytes": estimate.predicted_peak_bytes,
                         "measured_bytes": measured, "error": error, "peak_phase": estimate.peak_phase,
                         "activations_bytes": estimate.activations})
            print(f"{name:12s} {batch_size:6d} {estimate.predicted_peak_bytes / MIB:10.2f} "
                  f"{measured / MIB:10.2f} {error:+8.1%}  {estimate.peak_phase}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "results" / "memory_estimate.json")
    args = parser.parse_args()
    print(f"{'model':12s} {'batch':>6s} {'pred MiB':>10s} {'meas MiB':>10s} {'error':>8s}  peak in")
    rows = run(args.batch_sizes, args.device)
    worst = max(abs(r["error"]) for r in rows)
    print(f"worst error {worst:.1%} over {len(rows)} rows ({args.device}, torch {torch.__version__}, "
          f"{platform.processor() or platform.machine()})")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"device": args.device, "torch": torch.__version__, "rows": rows,
                                     "worst_abs_error": worst}, indent=2) + "\n")


if __name__ == "__main__":
    main()
