"""`torchwise tune lr|batch-size|workers|memory|compile CONFIG`: a group with one file per command.

Every tune command takes the same CONFIG and overrides as `torchwise train`, prints a table
(or one JSON object with ``--json``) and, with ``--run RUN_DIR``, appends its result to that
run's events.jsonl. The shared pieces live here.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import typer

CONFIG_ARG = typer.Argument(..., help="YAML config file, as for `torchwise train`.")
OVERRIDES_ARG = typer.Argument(None, help="key=value overrides, e.g. train.batch_size=128")
JSON_OPT = typer.Option(False, "--json", help="Print the result as one JSON object.")
RUN_OPT = typer.Option(None, "--run", help="Also append the result to RUN_DIR/events.jsonl.")


def default_output(config: Path, run_dir: Path | None, name: str) -> Path:
    """Where a tuner writes ``name`` unless told: RUN_DIR with --run, else ``runs/<config>-<name>``
    (the folder runs go to, kept out of the working copy), never the current folder itself."""
    if run_dir is not None:
        return run_dir / name
    Path("runs").mkdir(exist_ok=True)
    return Path("runs") / f"{config.stem}-{name}"


def load_workload(config: Path, overrides: list[str] | None) -> Any:
    from torchwise.config import load_config
    from torchwise.tune.workload import from_config

    return from_config(load_config(config, overrides or []))


def emit(event: str, result: dict[str, Any], *, as_json: bool, run_dir: Path | None, table: Any) -> None:
    """Print the table (or the JSON), and record the result in a run's events when asked."""
    if run_dir is not None:
        record_event(run_dir, event, result)
    if as_json:
        typer.echo(json.dumps(result, indent=2, default=str))
    else:
        from rich.console import Console

        Console().print(table)


def record_event(run_dir: Path, event: str, result: dict[str, Any]) -> None:
    from torchwise.errors import ConfigError
    from torchwise.runs.folder import RunFolder

    if not (run_dir / "events.jsonl").is_file():
        raise ConfigError(f"{run_dir} is not a run folder (no events.jsonl)",
                          hint="pass a folder that `torchwise train` wrote, e.g. runs/digits")
    folder = RunFolder(run_dir)
    try:
        folder.log_event(event, **json.loads(json.dumps(result, default=str)))
    finally:
        folder.close()


# Registered last: each subcommand module imports the shared options above.
SUBCOMMANDS: dict[str, str] = {
    "memory": "torchwise.cli.tune_memory",
    "batch-size": "torchwise.cli.tune_batch_size",
    "lr": "torchwise.cli.tune_lr",
    "workers": "torchwise.cli.tune_workers",
    "compile": "torchwise.cli.tune_compile",
}

app = typer.Typer(name="tune", no_args_is_help=True, add_completion=False,
                  help="Measure, then recommend: memory, batch size, learning rate, workers, compile.",
                  context_settings={"help_option_names": ["-h", "--help"]})
for _name, _module in SUBCOMMANDS.items():
    app.command(_name)(importlib.import_module(_module).command)
