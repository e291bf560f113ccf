"""The ``torchwise`` command: a tiny root that registers one module per command.

Each command module defines ``command`` (a typer-annotated function) and imports nothing
heavy at module level, so ``torchwise --help`` stays fast.
"""

from __future__ import annotations

import importlib
import sys
import traceback

import typer

# name -> module; each module exposes `command`, or `app` for a group of subcommands (tune).
# Add a line here to add a command.
COMMANDS: dict[str, str] = {
    "train": "torchwise.cli.train",
    "resume": "torchwise.cli.resume",
    "doctor": "torchwise.cli.doctor",
    "explain": "torchwise.cli.explain",
    "lint": "torchwise.cli.lint",
    "export": "torchwise.cli.export",
    "predict": "torchwise.cli.predict",
    "runs": "torchwise.cli.runs",
    "diagnose": "torchwise.cli.diagnose",
    "summary": "torchwise.cli.summary",
    "report": "torchwise.cli.report",
    "tune": "torchwise.cli.tune",
    "profile": "torchwise.cli.profile",
    "trust": "torchwise.cli.trust",
    "sweep": "torchwise.cli.sweep",
}


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="torchwise",
        help="The whole PyTorch path in one tool: check, train, tune, diagnose, export.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def root(
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks on errors."),
        version: bool = typer.Option(False, "--version", help="Print the torchwise version and exit.",
                                     is_eager=True, callback=print_version),
    ) -> None:
        """torchwise: train PyTorch models with every careful practice switched on."""

    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        if hasattr(module, "app"):
            app.add_typer(module.app, name=name)
        else:
            app.command(name)(module.command)
    return app


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning `TorchwiseError` into `error:`/`hint:` and an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    if debug:  # accepted anywhere on the line, as users type it: `torchwise train cfg.yaml --debug`
        args = ["--debug", *(a for a in args if a != "--debug")]
    from torchwise.errors import TorchwiseError

    try:
        build_app()(args=args, prog_name="torchwise", standalone_mode=True)
    except TorchwiseError as err:
        if debug:  # the traceback as well, and the same exit code: scripts see the same outcome
            traceback.print_exc()
        report_error(err)
        raise SystemExit(err.exit_code) from None
    except Exception as err:  # a bug, ours or in user code: short message, traceback with --debug
        if debug:
            traceback.print_exc()
        from torchwise.cli.render import user_frame

        where = user_frame(err)
        from torchwise.cli.render import terminal_text

        print(terminal_text(f"error: unexpected {type(err).__name__}: {err}" + (f"\n  at {where}" if where else "")),
              file=sys.stderr)
        if not debug:
            print("hint: rerun with --debug for the traceback", file=sys.stderr)
        raise SystemExit(1) from None


def print_version(value: bool) -> None:
    if value:
        from torchwise import __version__

        print(f"torchwise {__version__}")
        raise typer.Exit()


def report_error(err: BaseException) -> None:
    """Print ``error:`` and, where known, ``hint:`` on stderr."""
    from torchwise.cli.render import terminal_text

    message = getattr(err, "message", str(err))
    print(f"error: {terminal_text(message)}", file=sys.stderr)  # messages quote folder contents
    hint = getattr(err, "hint", None)
    if hint:
        print(f"hint: {terminal_text(hint)}", file=sys.stderr)
