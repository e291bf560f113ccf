"""`torchwise resume RUN_DIR [key=value ...]`: continue a run from its last checkpoint."""

from __future__ import annotations

from pathlib import Path

import typer


def command(
    run_dir: Path = typer.Argument(..., help="The run folder, e.g. runs/digits."),
    overrides: list[str] = typer.Argument(None, help="Only extensions: train.epochs=40, early_stop.patience=8"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output, only the result."),
    trust_code: bool = typer.Option(False, "--trust-code",
                                    help="Import the code a run folder you did not write names (read it first)."),
) -> None:
    """Continue a run exactly where its last checkpoint left it."""
    from torchwise.cli.render import exit_for, print_run_result, run_or_explain, said_once
    from torchwise.env.threads import use_free_cores
    from torchwise.runs.lock import check_free
    from torchwise.train.resume import load_run_config
    from torchwise.train.run import run_training

    with said_once():  # under torchrun every rank meets the same refusal; rank 0 prints it
        check_free(run_dir)  # first: a run in use is the answer, whatever else its config would say
        cfg = load_run_config(run_dir, overrides or [], trust_code=trust_code)
    threads = use_free_cores(cfg.train.device)
    if threads is not None and threads.message():
        typer.echo(threads.message(), err=True)
    result = run_or_explain(lambda: run_training(cfg, resume_dir=run_dir, progress="off" if quiet else None))
    print_run_result(result)
    exit_for(result)
