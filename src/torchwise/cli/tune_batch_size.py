"""`torchwise tune batch-size CONFIG`: the largest batch that fits, as train.batch_size (and accumulate)."""

from __future__ import annotations

from pathlib import Path

import typer

from torchwise.cli.tune import CONFIG_ARG, JSON_OPT, OVERRIDES_ARG, RUN_OPT


def command(config: Path = CONFIG_ARG, overrides: list[str] = OVERRIDES_ARG, as_json: bool = JSON_OPT,
            run: Path = RUN_OPT,
            budget: str = typer.Option(None, "--budget", help="Memory to fit in, e.g. 8GiB [default: the GPU's "
                                                              "free memory; on a CPU the available RAM]"),
            limit: int = typer.Option(None, "--max", help="Largest batch to try [default: the training set]."),
            ) -> None:
    """Find the largest batch whose training step fits: doubling, then bisection, on real steps."""
    from rich.table import Table

    from torchwise.cli.tune import emit, load_workload
    from torchwise.tune.batch_size import find_largest
    from torchwise.tune.units import format_bytes, parse_size

    budget_bytes = parse_size(budget) if budget is not None else None
    work = load_workload(config, overrides)
    result = find_largest(work, budget=budget_bytes, limit=limit)
    where = f"{format_bytes(result.budget_bytes)} on {work.device.type}" if result.budget_bytes else work.device.type
    table = Table(title=f"largest batch that fits in {where}", show_header=False)
    table.add_row("tried", ", ".join(f"{t.batch_size}{'' if t.fits else ' x'}" for t in result.trials),
                  "x: does not fit (" + ", ".join(sorted({t.how for t in result.trials if not t.fits})) + ")")
    capped = " (the whole training set)" if result.batch_size == result.limit == work.size() else ""
    table.add_row("largest batch", f"{result.batch_size}{capped}", f"set: train.batch_size={result.batch_size}",
                  style="bold")
    train = work.cfg.train
    if (result.micro_batch, result.accumulate) == (train.batch_size, train.accumulate):
        table.add_row("same effective batch", f"{train.batch_size} x {train.accumulate}", "fits as configured")
    else:
        table.add_row("same effective batch", f"{result.micro_batch} x {result.accumulate} = {result.effective_batch}",
                      f"set: train.batch_size={result.micro_batch} train.accumulate={result.accumulate}")
    emit("tune_batch_size", result.to_dict(), as_json=as_json, run_dir=run, table=table)
