"""`torchwise diagnose RUN_DIR [--json]`: name what went wrong with a run, with evidence and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from torchwise.diagnose.codes import codes_help


def command(
    run_dir: Path = typer.Argument(..., help="The run folder, e.g. runs/digits."),
    json_output: bool = typer.Option(False, "--json", help='Print {"run", "healthy", "findings": [...]}.'),
) -> None:
    """Read a run's curves, gradient statistics, events and facts; print each finding with why and the fix.

    Exit 0 when healthy, 1 when a finding is a warning or an error. Reads the folder only.

    Each code and when it fires: docs/diagnose.md.
    """
    from torchwise.diagnose.run_diagnosis import diagnose_run
    from torchwise.diagnose.run_finding import render_diagnosis

    diagnosis = diagnose_run(run_dir)
    if json_output:
        print(json.dumps(diagnosis.to_json(), indent=2))
    else:
        print(render_diagnosis(diagnosis, verbose=True))
    raise typer.Exit(0 if diagnosis.healthy else 1)


# --help lists every code `diagnose` can emit, from the one table of them (diagnose/codes.py).
command.__doc__ = f"{command.__doc__.rstrip()}\n\n    {codes_help()}\n"
