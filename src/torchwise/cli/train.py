"""`torchwise train CONFIG [key=value ...]`: one run from a YAML file."""

from __future__ import annotations

from pathlib import Path

import typer


def command(
    config: Path = typer.Argument(..., help="YAML config file (see examples/)."),
    overrides: list[str] = typer.Argument(None, help="key=value overrides, e.g. optim.lr=3e-4"),
    run_dir: Path = typer.Option(Path("runs"), "--run-dir", help="Folder that holds the runs."),
    name: str = typer.Option(None, "--name", help="Run name (default: the config file's name)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output, only the result."),
) -> None:
    """Train a model from a YAML config; writes runs/<name>/ and prints the result."""
    from torchwise.cli.render import exit_for, print_run_result, run_or_explain, said_once
    from torchwise.config import load_config
    from torchwise.env.threads import use_free_cores
    from torchwise.train.run import run_training

    with said_once():  # a bad config under torchrun: one error, not one per rank
        cfg = load_config(config, overrides or [])
    threads = use_free_cores(cfg.train.device)
    if threads is not None and threads.message():
        typer.echo(threads.message(), err=True)
    result = run_or_explain(lambda: run_training(cfg, runs_dir=run_dir, name=name,
                                                 progress="off" if quiet else None))
    print_run_result(result)
    exit_for(result)
