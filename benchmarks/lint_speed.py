"""How long `torchwise lint` takes on a long training file, and that it grows linearly.

A generated training file (AMP, accumulation, clipping, scheduling, logging, validation: a
block that exercises most rules, repeated) of 250 and of 2,000+ lines is linted in one
process, interleaved, several times; the table shows the median seconds and the ratio of
the two, which stays near the ratio of their lengths (about 8) when every rule is linear.

    python benchmarks/lint_speed.py [--repeats 9] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import textwrap
import time
from pathlib import Path

from torchwise.lint.engine import lint_source

_BLOCK = textwrap.dedent(
    """
    def train_{n}(model, loader, optimizer, scheduler, scaler, criterion):
        model.train()
        for step, (x, y) in enumerate(loader):
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = criterion(model(x), y) / 4
            scaler.scale(loss).backward()
            if (step + 1) % 4 == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
            if step % 100 == 0:
                print(step, loss.item())
        model.eval()
        with torch.no_grad():
            for x, y in val_loader:
                criterion(model(x), y)
    """
)


def generated_script(lines: int) -> str:
    """A clean training file of at least ``lines`` lines (no rule fires on it)."""
    blocks = ["import torch\n"]
    while sum(b.count("\n") for b in blocks) < lines:
        blocks.append(_BLOCK.format(n=len(blocks)))
    return "".join(blocks)


def time_lint(sources: dict[str, str], repeats: int) -> dict[str, list[float]]:
    """Seconds per lint of each source, interleaved so machine noise hits them alike."""
    times: dict[str, list[float]] = {name: [] for name in sources}
    lint_source(next(iter(sources.values())))  # warm the imports
    for _ in range(repeats):
        for name, source in sources.items():
            started = time.perf_counter()
            lint_source(source)
            times[name].append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sources = {"250 lines": generated_script(250), "2000 lines": generated_script(2000)}
    times = time_lint(sources, args.repeats)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("| file | lines | median s | min s | max s |")
    print("|---|---:|---:|---:|---:|")
    for name, source in sources.items():
        values = times[name]
        row = f"{medians[name]:.3f} | {min(values):.3f} | {max(values):.3f}"
        print(f"| {name} | {source.count(chr(10))} | {row} |")
    ratio = medians["2000 lines"] / medians["250 lines"]
    lines = sources["2000 lines"].count("\n") / sources["250 lines"].count("\n")
    print(f"ratio 2000/250: {ratio:.1f}x the time for {lines:.1f}x the lines")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"times": times, "medians": medians, "ratio": ratio}, indent=2) + "\n")


if __name__ == "__main__":
    main()
