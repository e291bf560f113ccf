"""What a trustworthy checkpoint costs: torchwise save/load next to plain torch.save/torch.load.

A ~100M-parameter model (a stack of fp32 Linear layers, ~400 MB) alone ("weights"), and with
its Adam state ("training": weights + exp_avg + exp_avg_sq, ~1.2 GB). torchwise writes
safetensors + meta.json, hashes every byte, fsyncs every file and folder and swaps the folder
in atomically; "torch.save" writes a pickle-zip and returns, "torch.save + fsync" also waits
for the disk, which is the fair comparison for durability. Loads are timed into a fresh model
(and optimizer): read, verify (torchwise), and ``load_state_dict``, each from the disk (the
files are dropped from the page cache first, as for a resume in a new process). After each
timed operation an untimed ``os.sync()`` flushes what a save without fsync left dirty, so that
its writeback does not slow down the next variant.

All saves run first, then all loads; within each group the variants run interleaved (order
rotated each repeat) so machine noise hits them alike. Saves find their previous output in the
page cache, as in training. The table shows medians and ratios to torch.save.

    python benchmarks/checkpoint_io.py [--repeats 5] [--json benchmarks/results/checkpoint_io.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from torchwise.checkpoints.checkpoint import load_checkpoint, save_checkpoint
from torchwise.checkpoints.checkpoint_folder import fsync_path
from torchwise.checkpoints.tensor_file import drop_from_page_cache

LAYERS, WIDTH_IN, WIDTH_OUT = 8, 3072, 4096  # 8 x 12.6M weights = 100.7M parameters


def make_model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    with torch.no_grad():
        return nn.Sequential(*(nn.Linear(WIDTH_IN, WIDTH_OUT) for _ in range(LAYERS)))


def make_adam(model: nn.Module, *, step: bool) -> torch.optim.Optimizer:
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    if step:  # one step with random gradients fills exp_avg and exp_avg_sq
        for param in model.parameters():
            param.grad = torch.randn_like(param)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return optimizer


def drop_page_cache(folder: Path) -> None:
    """Loads read from the disk, as a resume in a new process does, not from the page cache."""
    for path in folder.rglob("*"):
        if path.is_file():
            drop_from_page_cache(path)


def variants(
    model: nn.Module, optimizer: torch.optim.Optimizer | None, folder: Path
) -> dict[str, Callable[[], None]]:
    """name -> one timed operation. Each save writes over its own previous output."""
    weights = model.state_dict()
    training = {"optimizer": optimizer.state_dict()} if optimizer else {}
    pickle_path, torchwise_path = folder / "plain.pt", folder / "last"

    def torch_save() -> None:
        torch.save({"model": weights, **training}, pickle_path)

    def torch_save_fsync() -> None:
        torch_save()
        fsync_path(pickle_path)

    def torchwise_save() -> None:
        save_checkpoint(
            torchwise_path,
            model_state=weights,
            training_state=training,
            meta={"config_hash": "bench"},
        )

    def into_fresh(model_state: dict[str, Any], optimizer_state: Any) -> None:
        fresh = make_model(1)
        fresh.load_state_dict(model_state)
        if optimizer_state is not None:
            make_adam(fresh, step=False).load_state_dict(optimizer_state)

    def torch_load() -> None:
        loaded = torch.load(pickle_path, map_location="cpu", weights_only=True)
        into_fresh(loaded["model"], loaded.get("optimizer"))

    def torchwise_load() -> None:
        loaded = load_checkpoint(torchwise_path)
        into_fresh(loaded.model_state, loaded.training_state.get("optimizer"))

    return {
        "save: torch.save": torch_save,
        "save: torch.save + fsync": torch_save_fsync,
        "save: torchwise": torchwise_save,
        "load: torch.load": torch_load,
        "load: torchwise": torchwise_load,
    }


def measure(
    operations: dict[str, Callable[[], None]], repeats: int, folder: Path
) -> dict[str, list[float]]:
    """All saves first, then all loads, each group interleaved. Saves run as in training:
    each variant's previous file is still in the page cache. Loads read from the disk."""
    times: dict[str, list[float]] = {name: [] for name in operations}
    saves = [name for name in operations if name.startswith("save")]
    loads = [name for name in operations if name.startswith("load")]
    for name in saves:  # warm-up: every file exists before the first timed write
        operations[name]()
    os.sync()
    for group in (saves, loads):
        for repeat in range(repeats):
            shift = repeat % len(group)
            for name in group[shift:] + group[:shift]:
                if group is loads:
                    drop_page_cache(folder)
                start = time.perf_counter()
                operations[name]()
                times[name].append(time.perf_counter() - start)
                # Untimed: flush what a save without fsync left dirty, so that its writeback
                # does not slow down whichever variant runs next.
                os.sync()
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/checkpoint_io.json"))
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to write (default: a temp dir)"
    )
    args = parser.parse_args(argv)

    model = make_model(0)
    params = sum(p.numel() for p in model.parameters())
    results: dict[str, Any] = {}
    for state_name in ("weights", "training"):
        optimizer = make_adam(model, step=True) if state_name == "training" else None
        with tempfile.TemporaryDirectory(dir=args.dir) as folder:
            times = measure(variants(model, optimizer, Path(folder)), args.repeats, Path(folder))
        megabytes = params * 4 * (3 if optimizer else 1) / 1e6
        results[state_name] = {
            "megabytes": round(megabytes),
            "seconds": times,
            "median": {name: statistics.median(t) for name, t in times.items()},
        }
        print_table(state_name, results[state_name])

    report = {
        "benchmark": "checkpoint_io",
        "command": f"python benchmarks/checkpoint_io.py --repeats {args.repeats}",
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "system": platform.platform(),
        },
        "parameters": params,
        "repeats": args.repeats,
        "results": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"\nwritten: {args.json}")


def print_table(state_name: str, result: dict[str, Any]) -> None:
    median, seconds = result["median"], result["seconds"]
    repeats = len(next(iter(seconds.values())))
    print(f"\n{state_name} state, {result['megabytes']} MB, {repeats} repeats")
    print(f"{'variant':<26}{'median s':>9}{'min s':>7}{'MB/s':>7}{'x torch':>9}{'x +fsync':>10}")
    for name, value in median.items():
        save = name.startswith("save")
        base = median["save: torch.save" if save else "load: torch.load"]
        fsynced = f"{value / median['save: torch.save + fsync']:>10.2f}" if save else ""
        print(
            f"{name:<26}{value:>9.3f}{min(seconds[name]):>7.3f}"
            f"{result['megabytes'] / value:>7.0f}{value / base:>9.2f}{fsynced}"
        )


if __name__ == "__main__":
    main()
