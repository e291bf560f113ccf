"""``torchwise doctor``: check the install and the machine, print verdicts with exact fixes."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from torchwise.env import DoctorReport

LEVEL_STYLE = {"ok": "green", "info": "dim", "warn": "yellow", "fail": "bold red"}


def command(
    json_output: bool = typer.Option(
        False, "--json", help='Print {"findings": [...], "report": {...}} instead of a table.'
    ),
    full: bool = typer.Option(False, "--full", help="Also time a real torch.compile (slower)."),
) -> None:
    """Check torch, CUDA, driver, GPU, companions, DataLoader workers and disk; exit 1 on a fail."""
    from torchwise.env import doctor

    report = doctor(full=full)
    if json_output:
        print(json.dumps(report.to_json(), indent=2))
    else:
        render(report)
    raise typer.Exit(report.exit_code)


def render(report: DoctorReport) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="torchwise doctor", title_justify="left")
    table.add_column("level")
    table.add_column("check")
    table.add_column("finding", overflow="fold")
    for finding in report.findings:
        style = LEVEL_STYLE[finding.level]
        table.add_row(f"[{style}]{finding.level}[/]", finding.id, finding.summary)
    console.print(table)
    for finding in report.findings:
        if finding.level in ("warn", "fail"):
            style = LEVEL_STYLE[finding.level]
            # soft_wrap: a pip command broken over two lines cannot be pasted
            console.print(
                f"\n[{style}]{finding.level}[/] [bold]{finding.id}[/]: {finding.summary}",
                soft_wrap=True,
            )
            if finding.detail:
                console.print(finding.detail, markup=False, highlight=False, soft_wrap=True)
            if finding.fix:
                console.print("[bold]fix:[/]", finding.fix, highlight=False, soft_wrap=True)
    verdict = "problems found" if report.failed else "no failures"
    console.print(f"\n{verdict}. Paste this into a bug report:\n")
    print(report.render_plain())
