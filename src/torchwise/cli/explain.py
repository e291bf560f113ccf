"""``torchwise explain [FILE|-]``: what an error means, its likely cause, and the fix.

Exit code 0 when the error is explained, 1 when it is not one torchwise knows, 2 when the
input cannot be read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer


def read_source(source: str) -> str:
    from torchwise.errors import TorchwiseError

    if source == "-":
        if sys.stdin.isatty():  # otherwise a bare `torchwise explain` looks hung
            print("Paste the error or traceback, then press Ctrl-D.", file=sys.stderr)
        return sys.stdin.read()
    try:
        return Path(source).read_text(errors="replace")
    except OSError as err:
        raise TorchwiseError(
            f"cannot read {source}: {err.strerror}",
            hint="pass a file holding the error message or traceback, or - to read stdin",
        ) from None


def command(
    source: str = typer.Argument(
        "-",
        metavar="FILE|-",
        help="File with the error or whole traceback; - (default) reads stdin.",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the explanation as JSON."),
) -> None:
    """Explain a PyTorch error: exit 0 when explained, 1 when unknown, 2 when unreadable."""
    from torchwise.errors import TorchwiseError
    from torchwise.explain.lookup import explain
    from torchwise.explain.paste import Paste

    text = read_source(source)
    if not text.strip():
        raise TorchwiseError(f"{'stdin' if source == '-' else source} holds no error message",
                             hint="paste the error or the whole traceback, e.g. torchwise explain crash.log")
    explanation = explain(text)
    if json_output:
        print(json.dumps(explanation.to_json() if explanation else None, indent=2))
    elif explanation is None:
        # the error line a reader would point at, not the last line of the paste
        print(f"torchwise does not know this error yet: {Paste(text).error_line()[:200]}")
        print(
            "Search the message (without your own names and numbers) or ask on discuss.pytorch.org."
        )
    else:
        # the same text a crashed `torchwise train` run prints under its error
        print(explanation.render())
        if len([line for line in text.splitlines() if line.strip()]) > 1:
            # in a long log, say which line was read: it is not always the last one
            print(f"  read from:     {explanation.line[:200]}")
    raise typer.Exit(0 if explanation else 1)
