"""``torchwise lint PATH...``: static check of a training script for classic PyTorch mistakes."""

from __future__ import annotations

import sys

import typer

from torchwise.errors import LintError


def _codes(value: str | None) -> list[str]:
    return [c.strip() for c in (value or "").split(",") if c.strip()]


def command(
    paths: list[str] = typer.Argument(..., help="Python files or folders to check."),
    output_format: str = typer.Option("text", "--format", help="text, json or sarif."),
    select: str = typer.Option(None, "--select", help="Only these codes or prefixes (TW1,TW106)."),
    ignore: str = typer.Option(None, "--ignore", help="Skip these codes or prefixes."),
    fix: bool = typer.Option(False, "--fix", help="Rewrite what can be fixed (TW110, TW117, TW123)."),
) -> None:
    """Check training scripts for the classic PyTorch mistakes (exit 1 on errors or warnings)."""
    from torchwise.lint.engine import lint_paths
    from torchwise.lint.fix import fix_paths
    from torchwise.lint.report import FORMATS, fails, render

    if output_format not in FORMATS:
        raise LintError(
            f"unknown format {output_format!r}", hint=f"use one of: {', '.join(FORMATS)}"
        )
    options = {"select": _codes(select) or None, "ignore": _codes(ignore)}
    if fix:
        findings, changed = fix_paths(paths, **options)
        for path in changed:
            print(f"fixed: {path}", file=sys.stderr)
    else:
        findings = lint_paths(paths, **options)
    typer.echo(render(findings, output_format))
    raise typer.Exit(1 if fails(findings) else 0)
