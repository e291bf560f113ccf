"""Shared rendering for commands that run training: the result table and crash explanations."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from torchwise.errors import RunFailed, TorchwiseError


def run_or_explain(action: Callable[[], Any]) -> Any:
    """Run ``action``; a crash in user code becomes a `RunFailed` whose hint explains it."""
    try:
        return action()
    except TorchwiseError:
        raise
    except Exception as err:
        where = user_frame(err)
        raise RunFailed(f"training crashed: {type(err).__name__}: {err}" + (f"\n  at {where}" if where else ""),
                        hint=explain_hint(err)) from err


def user_frame(err: BaseException) -> str | None:
    """``file:line in function`` and the line's code, for the innermost frame of the traceback
    that is the user's own code: not torchwise, not the standard library, not an installed
    package. Without --debug this is the one place a crash in a model's ``forward`` is named."""
    import sysconfig
    import traceback
    from pathlib import Path

    import torchwise

    paths = sysconfig.get_paths()
    ours = [Path(torchwise.__file__).resolve().parent,
            *{Path(paths[key]).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib")}]
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if frame.filename.startswith("<"):
            continue
        file = Path(frame.filename).resolve()
        if not any(file.is_relative_to(folder) for folder in ours):
            code = f"\n    {frame.line}" if frame.line else ""
            return f"{frame.filename}:{frame.lineno} in {frame.name}{code}"
    return None


def explain_hint(err: BaseException) -> str:
    try:
        from torchwise.explain.lookup import explain
    except ImportError:
        return "rerun with --debug for the traceback"
    explanation = explain(err)
    return explanation.render() if explanation is not None else "rerun with --debug for the traceback"


def exit_for(result: Any) -> None:
    """Exit codes: 0 finished, 1 failed, 130 stopped by SIGINT, 143 by SIGTERM (128 + signal)."""
    import typer

    if result.status == "failed":
        raise typer.Exit(1)
    if result.status == "interrupted":
        raise typer.Exit(130 if "SIGINT" in (result.summary.get("reason") or "") else 143)


def print_run_result(result: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    if os.environ.get("RANK", "0") != "0":  # under torchrun one table is enough: rank 0's
        return
    summary = result.summary
    table = Table(title=f"run {summary['name']}: {summary['status']}", show_header=False)
    best = summary.get("best")
    if best:
        table.add_row("best", f"{best['metric']} {best['value']:.4g} (epoch {best['epoch'] + 1}, step {best['step']})")
    for key, value in (summary.get("final") or {}).items():
        table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    table.add_row("epochs / steps", f"{summary['epochs']} / {summary['steps']}")
    table.add_row("time", f"{summary['wall_seconds']:.1f} s ({summary['samples_per_second']:,.0f} samples/s)")
    if summary.get("reason"):
        table.add_row("reason", summary["reason"])
    table.add_row("run folder", str(result.run_dir))
    if summary["status"] == "interrupted":
        table.add_row("continue with", f"torchwise resume {result.run_dir}")
    Console().print(table)
    print_diagnosis(result.run_dir)


def print_diagnosis(run_dir: Any) -> None:
    """The run's diagnosis.json: one line when healthy, each finding with why and fix otherwise."""
    import json

    from torchwise.diagnose.run_finding import Diagnosis, RunFinding, render_diagnosis

    try:
        data = json.loads((run_dir / "diagnosis.json").read_text())
    except (OSError, ValueError):
        return
    diagnosis = Diagnosis(run=data["run"], findings=[RunFinding(**f) for f in data["findings"]])
    print(render_diagnosis(diagnosis))
