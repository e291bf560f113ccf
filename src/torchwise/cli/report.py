"""`torchwise report RUN_DIR [RUN_DIR ...]`: one self-contained HTML page with plots."""

from __future__ import annotations

from pathlib import Path

import typer


def command(
    run_dirs: list[Path] = typer.Argument(..., help="One run folder, or several to compare."),
    out: Path = typer.Option(None, "--out", "-o", help="Where to write the page (default: RUN_DIR/report.html "
                                                       "for one run, report.html here for several)."),
) -> None:
    """Write an HTML report: losses, the monitored metric, LR, gradient norm, throughput, data wait,
    the diagnosis, final metrics, checkpoints, config and environment; for several runs, overlaid
    curves, metrics side by side and the config keys that differ. Plots are embedded PNGs: the file
    needs no network and no other file."""
    from torchwise.runs.report import write_report

    target = write_report(list(run_dirs), out)
    print(f"report: {target}")
