"""`torchwise runs [DIR]` and `torchwise runs compare A B [...]`: the experiment ledger."""

from __future__ import annotations

import json
from pathlib import Path

import typer

STATUS_STYLE = {"completed": "green", "early_stopped": "green", "pruned": "yellow", "running": "cyan",
                "interrupted": "yellow",
                "failed": "bold red", "killed": "bold red"}


def command(
    paths: list[str] = typer.Argument(None, help="DIR (default: runs), or `compare` followed by run folders."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    png: Path = typer.Option(None, "--png", help="compare: where to write the overlaid curves "
                                                  "(default: compare.png in the current folder)."),
) -> None:
    """List the runs of a folder: status, best metric, epochs, wall time, differing config, anomalies.

    `torchwise runs compare A B [...]` shows the config keys that differ, the best and final
    metrics side by side, and writes the overlaid curves to a PNG. A run whose process died
    without saying so (SIGKILL, out-of-memory killer) shows as `killed`, not `running`.
    """
    paths = list(paths or [])
    if paths and paths[0] == "compare":
        return compare_command([Path(p) for p in paths[1:]], json_output=json_output, png=png)
    if len(paths) > 1:
        from torchwise.errors import ConfigError

        raise ConfigError(f"runs takes one folder, got {len(paths)}",
                          hint="torchwise runs runs/   or   torchwise runs compare RUN_A RUN_B")
    from torchwise.runs.ledger import ledger_rows

    rows = ledger_rows(Path(paths[0] if paths else "runs"))
    if json_output:
        print(json.dumps(rows, indent=2))
        return
    render_ledger(rows)


def render_ledger(rows: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from torchwise.runs.ledger import best_text, duration, number, short_time

    cells = []
    for row in rows:
        style = STATUS_STYLE.get(row["status"], "")
        differs = "\n".join(f"{k}={json.dumps(v)}" for k, v in row["differs"].items())
        cells.append([row["name"], short_time(row["started"]), Text(row["status"], style=style),
                      best_text(row["best"]).replace(" ", "\n", 1), number(row["epochs"]),
                      duration(row["wall_seconds"]),
                      differs or "-", ", ".join(row["anomalies"]) or "-"])
    columns = ("run", "started", "status", "best", "epochs", "time", "differs", "anomalies")
    widths = [max((len(line) for cell in cells for line in str(cell[i]).split("\n")), default=0)
              for i in range(len(columns))]
    console = Console()
    # The short columns never wrap; the long ones fold, but not below 14 characters where the
    # terminal has the room (rich would otherwise squeeze them to a few letters first).
    roomy = sum(min(w, 14) if i in (3, 6, 7) else w for i, w in enumerate(widths)) + 3 * len(columns) + 1 \
        <= console.width
    table = Table(title_justify="left")
    for index, column in enumerate(columns):
        table.add_column(column, overflow="fold", no_wrap=index in (0, 1, 2, 4, 5),
                         min_width=min(widths[index], 14) if roomy else None)
    for cell in cells:
        table.add_row(*cell)
    console.print(table if rows else "no runs here")


def compare_command(paths: list[Path], *, json_output: bool, png: Path | None) -> None:
    from torchwise.errors import ConfigError
    from torchwise.runs.ledger import compare
    from torchwise.runs.plots import compare_png
    from torchwise.runs.reader import read_run

    if len(paths) < 2:
        raise ConfigError("runs compare needs two or more run folders",
                          hint="torchwise runs compare runs/a runs/b")
    result = compare(paths)
    target = png or Path("compare.png")
    target.write_bytes(compare_png([read_run(p) for p in paths]))
    result["png"] = str(target)
    if json_output:
        print(json.dumps(result, indent=2))
        return
    render_compare(result)


def render_compare(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    from torchwise.runs.ledger import best_text, number

    names = [run["name"] for run in result["runs"]]
    table = Table(title_justify="left")
    table.add_column("")
    for name in names:
        table.add_column(name, overflow="fold")
    table.add_row("status", *(run["status"] for run in result["runs"]))
    for key, values in result["config"].items():
        table.add_row(key, *(json.dumps(v) for v in values))
    table.add_row("best", *(best_text(b) for b in result["best"]))
    for metric, values in result["final"].items():
        table.add_row(f"final {metric}", *(number(v) for v in values))
    console = Console()
    console.print(table)
    console.print(f"curves: {result['png']}")
