"""`torchwise report RUN_DIR [RUN_DIR ...]`: one self-contained HTML page with plots."""

from __future__ import annotations

from pathlib import Path

import typer


def command(
    run_dirs: list[Path] = typer.Argument(..., help="One run folder, several to compare, or a sweep folder."),
    out: Path = typer.Option(None, "--out", "-o", help="Where to write the page (default: RUN_DIR/report.html "
                                                       "for one run, report.html here for several)."),
) -> None:
    """Write an HTML report: losses, the monitored metric, LR, gradient norm, throughput, data wait,
    the diagnosis, final metrics, checkpoints, config and environment; for several runs, overlaid
    curves, metrics side by side and the config keys that differ. Plots are embedded PNGs: the file
    needs no network and no other file. For a sweep folder: Optuna's optimisation history, parameter
    importance and parallel-coordinates plots, the trial table and the best config."""
    from torchwise.runs.report import write_report
    from torchwise.sweep.record import is_sweep_folder

    if len(run_dirs) == 1 and is_sweep_folder(run_dirs[0]):  # a sweep folder: the search, not one run
        from torchwise.sweep.report import write_sweep_report

        print(f"report: {write_sweep_report(run_dirs[0], out)}")
        return
    target = write_report(list(run_dirs), out)
    print(f"report: {target}")
