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
    wide: bool = typer.Option(False, "--wide", help="Every differing key and anomaly, wrapped, however wide."),
    png: Path = typer.Option(None, "--png", help="compare: where to write the overlaid curves "
                                                  "(default: compare.png in the folder that holds the first run)."),
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
    if wide:
        render_ledger(rows)
    else:
        render_narrow(rows)


def render_narrow(rows: list[dict]) -> None:
    """One line per run that fits the terminal (80 columns included): name, status, best (the
    monitored value, ``val_`` left out), time, and what differs from the runs of the same data and
    model (`ledger.family`), cut to fit; all of it with --wide or --json."""
    from rich.console import Console
    from rich.text import Text

    from torchwise.cli.render import terminal_text
    from torchwise.runs.ledger import duration, number

    console = Console()
    if not rows:
        console.print("no runs here")
        return
    widths = (14, 13, 15, 7)  # run, status, best, time; what differs takes the rest of the line

    def cut(text: str, width: int) -> str:
        text = terminal_text(text)  # everything here comes from a folder: no control characters
        return text if len(text) <= width else text[:width - 1] + "…"

    console.print(Text("  ".join(f"{title:<{w}}" for title, w in zip(("run", "status", "best", "time"), widths,
                                                                       strict=True)) + "  differs from like runs",
                       style="bold"), no_wrap=True, crop=True)
    rest = max(console.width - sum(widths) - 2 * len(widths), 10)
    for row in rows:
        best = row["best"] or {}
        best_text = f"{best['metric'].removeprefix('val_')} {number(best['value'])}" \
            if best.get("value") is not None else "-"
        # what differs from the runs of the same data and model (its family: --json, --wide)
        differs = " ".join(f"{key.rsplit('.', 1)[-1]}={json.dumps(value)}" for key, value in row["differs"].items())
        line = Text()
        line.append(f"{cut(row['name'], widths[0]):<{widths[0]}}  ")
        line.append(f"{cut(row['status'], widths[1]):<{widths[1]}}", style=STATUS_STYLE.get(row["status"], ""))
        line.append(f"  {cut(best_text, widths[2]):<{widths[2]}}  {duration(row['wall_seconds']):>{widths[3]}}  ")
        line.append(cut(differs or "-", rest))
        console.print(line, no_wrap=True, crop=True)

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
    widths = [max((len(line) for cell in cells for line in str(cell[i]).split("\n")), default=len(columns[i]))
              for i in range(len(columns))]
    widths = [max(width, len(title)) for width, title in zip(widths, columns, strict=True)]
    # --wide: as wide as the table needs (pipe it to `less -S`), never squeezed into the terminal.
    console = Console(width=max(sum(widths) + 3 * len(columns) + 1, Console().width))
    table = Table(title_justify="left")
    for index, column in enumerate(columns):
        table.add_column(column, no_wrap=True, min_width=widths[index])
    for cell in cells:
        table.add_row(*(safe_cell(c) for c in cell))
    console.print(table if rows else "no runs here")


def safe_cell(cell):
    """A cell as the terminal may show it: text from a folder without control characters."""
    from rich.text import Text

    from torchwise.cli.render import terminal_text

    if isinstance(cell, Text):
        return Text(terminal_text(cell.plain), style=cell.style)
    return terminal_text(cell)


def compare_command(paths: list[Path], *, json_output: bool, png: Path | None) -> None:
    from torchwise.errors import ConfigError
    from torchwise.runs.ledger import compare
    from torchwise.runs.plots import compare_png
    from torchwise.runs.reader import read_run

    if len(paths) < 2:
        raise ConfigError("runs compare needs two or more run folders",
                          hint="torchwise runs compare runs/a runs/b")
    result = compare(paths)
    # Beside the runs (the folder that holds the first), not in whatever folder the shell is in.
    target = png or paths[0].resolve().parent / "compare.png"
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
        table.add_column(safe_cell(name), overflow="fold")
    rows = [["status", *(run["status"] for run in result["runs"])]]
    rows += [[key, *(json.dumps(v) for v in values)] for key, values in result["config"].items()]
    rows.append(["best", *(best_text(b) for b in result["best"])])
    rows += [[f"final {metric}", *(number(v) for v in values)] for metric, values in result["final"].items()]
    for row in rows:
        table.add_row(*(safe_cell(c) for c in row))
    console = Console()
    console.print(table)
    console.print(safe_cell(f"curves: {result['png']}"))
