"""`torchwise tune lr CONFIG`: the LR range test, the suggested learning rate and a plot."""

from __future__ import annotations

from pathlib import Path

import typer

from torchwise.cli.tune import CONFIG_ARG, JSON_OPT, OVERRIDES_ARG, RUN_OPT


def command(config: Path = CONFIG_ARG, overrides: list[str] = OVERRIDES_ARG, as_json: bool = JSON_OPT,
            run: Path = RUN_OPT,
            plot: Path = typer.Option(None, "--plot", help="PNG of the curve [default: runs/CONFIG-lr_finder.png, "
                                                           "or RUN_DIR/lr_finder.png with --run]"),
            start_lr: float = typer.Option(1e-7, "--start-lr", help="First learning rate."),
            end_lr: float = typer.Option(10.0, "--end-lr", help="Last learning rate."),
            steps: int = typer.Option(100, "--steps", help="At most this many steps (stops early on divergence)."),
            ) -> None:
    """Run the LR range test (real steps, state restored after) and suggest optim.lr."""
    from rich.table import Table

    from torchwise.cli.tune import default_output, emit, load_workload
    from torchwise.tune.lr import plot as draw
    from torchwise.tune.lr import range_test

    work = load_workload(config, overrides)
    result = range_test(work, start_lr=start_lr, end_lr=end_lr, num_steps=steps)
    path = plot or default_output(config, run, "lr_finder.png")
    result.plot = str(draw(result, path))
    table = Table(title=f"LR range test: {len(result.lrs)} steps, {result.stopped}", show_header=False)
    table.add_row("suggested optim.lr", f"{result.suggested_lr:.3g}", "valley rule: 2/3 along the longest fall",
                  style="bold")
    table.add_row("steepest descent", f"{result.steepest_lr:.3g}", "most negative slope of the smoothed loss")
    best = min(range(len(result.smoothed)), key=result.smoothed.__getitem__)
    table.add_row("lowest smoothed loss", f"{result.smoothed[best]:.4g}", f"at lr {result.lrs[best]:.3g}")
    table.add_row("plot", result.plot, "")
    table.add_row("set", f"optim.lr={result.suggested_lr:.3g}", "")
    emit("tune_lr", result.to_dict(), as_json=as_json, run_dir=run, table=table)
