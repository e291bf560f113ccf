"""`torchwise trust RUN_DIR`: show the code a run folder would import, then sign it as yours."""

from __future__ import annotations

from pathlib import Path

import typer


def command(
    run_dir: Path = typer.Argument(..., help="A run folder someone else wrote, e.g. downloads/digits-run."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Sign without asking (the list is still printed)."),
) -> None:
    """Review the code a run folder names and sign it, so resume/load/predict/export accept it."""
    from torchwise.runs.trust import code_targets, describe_code, read_run_config, sign_run, verify_run

    config = read_run_config(run_dir)
    verdict = verify_run(run_dir)
    if verdict.trusted:
        typer.echo(f"{run_dir} is signed by you already; nothing to do")
        return
    base_dir = Path(config["base_dir"]) if config.get("base_dir") else None
    code = code_targets(config, base_dir=base_dir)
    typer.echo(f"{run_dir} is not signed by you: {verdict.reason}.")
    if code:
        typer.echo(f"Opening it imports code it names:\n{describe_code(code, base_dir=base_dir)}")
    else:
        typer.echo("Its config names only torchwise built-ins: opening it imports no code of its own.")
    if not yes and not typer.confirm(f"Sign {run_dir} as yours, so that torchwise runs this code without asking?"):
        typer.echo("not signed")
        raise typer.Exit(1)
    sign_run(run_dir)
    typer.echo(f"signed {run_dir}")
