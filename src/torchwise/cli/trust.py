"""`torchwise trust PATH`: show the code a run folder (or artefact) would run, then sign it as yours."""

from __future__ import annotations

from pathlib import Path

import typer


def command(
    path: Path = typer.Argument(..., help="A run folder someone else wrote (e.g. downloads/digits-run), or "
                                          "an exported .pt2 / TorchScript .pt artefact."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Sign without asking (the list is still printed)."),
) -> None:
    """Review the code a run folder or artefact would run, and sign it so torchwise accepts it."""
    from torchwise.cli.render import terminal_text
    from torchwise.runs.trust import verify_artefact, verify_run

    artefact = path.is_file()
    if not artefact:
        refuse_damaged(path)
    verdict = verify_artefact(path) if artefact else verify_run(path)
    if verdict.trusted:
        typer.echo(f"{path} is signed by you already; nothing to do")
        return
    describe = _describe_artefact if artefact else _describe_run
    typer.echo(terminal_text(f"{path} is not signed by you: {verdict.reason}."))
    typer.echo(terminal_text(describe(path)))
    if not yes and not typer.confirm(f"Sign {path} as yours, so that torchwise runs this code without asking?"):
        typer.echo("not signed")
        raise typer.Exit(1)
    from torchwise.runs.trust import sign_artefact, sign_run

    (sign_artefact if artefact else sign_run)(path)
    typer.echo(f"signed {path}")


def refuse_damaged(run_dir: Path) -> None:
    """A run whose checkpoints do not match their meta.json is not signed (nor called yours)."""
    from torchwise.checkpoints.integrity import damage
    from torchwise.errors import CheckpointError

    found = damage(run_dir)
    if found:
        raise CheckpointError(f"{run_dir} is damaged: {'; '.join(found)}",
                              hint="get the checkpoint files again from whoever wrote the run; torchwise "
                                   "cannot resume, export or predict from a damaged checkpoint")


def _describe_run(run_dir: Path) -> str:
    from torchwise.runs.trust import code_targets, describe_code, validated_run_config

    cfg = validated_run_config(run_dir)  # the typed config: exactly what the gate checks
    code = code_targets(cfg)
    if not code:
        return "Its config names only torchwise built-ins: opening it imports no code of its own."
    return f"Opening it imports code it names:\n{describe_code(code, base_dir=cfg.base_dir)}"


def _describe_artefact(artefact: Path) -> str:
    from torchwise.export.manifest import read_manifest
    from torchwise.runs.trust import CODE_FORMATS

    fmt = read_manifest(artefact, check_sha256=False).get("format")
    if fmt in CODE_FORMATS:
        return f"Loading it can run code it carries: {CODE_FORMATS[fmt]}."
    return f"It is a {fmt} artefact: loading it runs no Python code."
