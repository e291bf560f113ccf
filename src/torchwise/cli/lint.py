"""``torchwise lint PATH...``: static check of a training script for classic PyTorch mistakes."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from torchwise.errors import LintError


def _codes(value: str | None) -> list[str]:
    return [c.strip() for c in (value or "").split(",") if c.strip()]


def command(
    paths: Annotated[
        list[str], typer.Argument(metavar="PATH", help="Python files or folders to check.")
    ],
    output_format: Annotated[str, typer.Option("--format", help="text, json or sarif.")] = "text",
    select: Annotated[
        str | None, typer.Option(help="Only these codes or prefixes, comma-separated (TW1,TW106).")
    ] = None,
    ignore: Annotated[str | None, typer.Option(help="Skip these codes or prefixes.")] = None,
    fix: Annotated[
        bool, typer.Option("--fix", help="Rewrite what can be fixed (TW110, TW117, TW123).")
    ] = False,
) -> None:
    """Check training scripts for the classic PyTorch mistakes (exit 1 on errors or warnings)."""
    from torchwise.lint.engine import lint_paths
    from torchwise.lint.fix import fix_paths
    from torchwise.lint.report import FORMATS, fails, render

    if output_format not in FORMATS:
        raise LintError(
            f"unknown format {output_format!r}", hint=f"use one of: {', '.join(FORMATS)}"
        )
    selected, ignored = _codes(select) or None, _codes(ignore)
    # Files that cannot be read or parsed are named at the end; the others are still linted.
    broken: list[LintError] = []
    if fix:
        findings, changed = fix_paths(paths, select=selected, ignore=ignored, errors=broken)
        for path in changed:
            print(f"fixed: {path}", file=sys.stderr)
    else:
        findings = lint_paths(paths, select=selected, ignore=ignored, errors=broken)
    if findings or not broken or output_format != "text":  # no "All checks passed." above an error
        typer.echo(render(findings, output_format))
    for error in broken:
        print(f"error: {error.message}", file=sys.stderr)
        if error.hint:
            print(f"hint: {error.hint}", file=sys.stderr)
    raise typer.Exit(2 if broken else 1 if fails(findings) else 0)
