"""`torchwise tune workers CONFIG`: the fewest DataLoader workers that load as fast as the most."""

from __future__ import annotations

from pathlib import Path

import typer

from torchwise.cli.tune import CONFIG_ARG, JSON_OPT, OVERRIDES_ARG, RUN_OPT


def command(config: Path = CONFIG_ARG, overrides: list[str] = OVERRIDES_ARG, as_json: bool = JSON_OPT,
            run: Path = RUN_OPT,
            max_workers: int = typer.Option(None, "--max-workers", help="Most workers to try [default: the cores]."),
            batches: int = typer.Option(20, "--batches", help="Batches timed per setting."),
            ) -> None:
    """Measure loader throughput against the model's step throughput; pick data.num_workers."""
    from rich.table import Table

    from torchwise.cli.tune import emit, load_workload
    from torchwise.tune.workers import AGREE, tune_loader

    work = load_workload(config, overrides)
    result = tune_loader(work, max_workers=max_workers, batches=batches)
    table = Table(title=f"DataLoader workers: {result.verdict} (searched {len(result.trials)} of "
                        f"{len(result.candidates)} settings in {result.search_seconds:.1f} s)")
    for column in ("num_workers", "samples/s", "timed"):
        table.add_column(column, justify="right")
    for trial in sorted(result.trials, key=lambda t: t.num_workers):
        timed = f"{trial.batches} batches" if trial.complete else f"{trial.batches} batches (stopped: too slow)"
        table.add_row(str(trial.num_workers), f"{trial.samples_per_second:,.0f}", timed,
                      style="bold" if trial.num_workers == result.num_workers else None)
    table.add_row("model step", f"{result.step_samples_per_second:,.0f}", "batches already in memory")
    keys = f"data.num_workers={result.num_workers}"
    if result.num_workers:
        keys += f" data.persistent_workers=true{' data.pin_memory=true' if result.pin_memory else ''}"
    advice = {"data-bound": "the loader cannot keep up even at the pick: make __getitem__ cheaper (decode once, "
                            "cache, smaller files) or move work to the GPU",
              "compute-bound": "the loader outpaces the model at the pick"}.get(
        result.verdict, "loader and model speeds moved too much between measurements to compare: "
                        "rerun on a quieter machine, or with more --batches")
    noise = (f"spread of the last {AGREE} measurements: loader {result.loader_spread:.0%} "
             f"({result.loader_repeats} taken), model step {result.step_spread:.0%} ({result.step_repeats} taken)")
    table.caption = f"set: {keys}\n{advice}\n{noise}"
    emit("tune_workers", result.to_dict(), as_json=as_json, run_dir=run, table=table)
