"""Tables in the docs that are generated from the code, so that a renamed key cannot go stale.

A page holds a generated table between two markers::

    <!-- generated: config-keys -->
    ...
    <!-- end: config-keys -->

`GENERATORS` maps each name to the function that writes its text. `tests/test_docs_tables.py`
fails when a page's block differs from what its generator writes now (a key or command added,
renamed or removed in the code, or edited by hand in the page); `python tests/docs_tables.py`
rewrites every block. Another page can use the same markers with a generator of its own: add it
to `GENERATORS` (e.g. a lint rules table from the rule registry).
"""

from __future__ import annotations

import re
import sys
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MARKED = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end: (?P=name) -->)", re.DOTALL)


def cell(text: str) -> str:
    """One Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


# --- config keys, from the pydantic schema's field docstrings ------------------------------------

def config_fields() -> Iterator[tuple[str, object, str]]:
    """Every config key as (dotted key, field info, type), sections walked in schema order."""
    from pydantic import BaseModel

    from torchwise.config import RunConfig

    def walk(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, object, str]]:
        for name, field in model.model_fields.items():
            annotation = field.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                yield from walk(annotation, f"{prefix}{name}.")
            else:
                yield f"{prefix}{name}", field, type_name(annotation)

    yield from walk(RunConfig, "")


def type_name(annotation: object) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " | ".join(f"`{value}`" if isinstance(value, str) else str(value).lower()
                            for value in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in typing.get_args(annotation))
    if annotation is type(None):
        return "null"
    if origin is not None:
        args = ", ".join(type_name(arg) for arg in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    return getattr(annotation, "__name__", str(annotation))


def default_text(field) -> str:
    from pydantic_core import PydanticUndefined

    if field.default_factory is not None:
        value = field.default_factory()
        return "`{}`" if value == {} else "`[]`" if value == [] else f"`{value}`"
    if field.default is PydanticUndefined:
        return "required"
    if field.default is None:
        return "`null`"
    if isinstance(field.default, bool):
        return f"`{str(field.default).lower()}`"
    return f"`{field.default}`"


def config_keys_table() -> str:
    rows = ["| key | type | default | what it does |", "|---|---|---|---|"]
    for key, field, kind in config_fields():
        rows.append(f"| `{key}` | {cell(kind)} | {cell(default_text(field))} | {cell(field.description or '')} |")
    return "\n".join(rows) + "\n"


# --- CLI commands and their options, from the typer app ------------------------------------------

def cli_commands() -> Iterator[tuple[str, object]]:
    """Every command as ("tune lr", click command), in registration order."""
    import typer

    from torchwise.cli import build_app

    root = typer.main.get_command(build_app())
    for name, command in root.commands.items():
        if hasattr(command, "commands"):  # a group: tune
            for sub_name, sub in command.commands.items():
                yield f"{name} {sub_name}", sub
        else:
            yield name, command


def first_line(text: str | None) -> str:
    return (text or "").strip().split("\n\n", 1)[0].replace("\n", " ")


def usage_name(argument) -> str:
    name = argument.name.upper() + ("..." if argument.nargs == -1 else "")
    return name if argument.required else f"[{name}]"


def cli_reference() -> str:
    out = []
    for name, command in cli_commands():
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        usage = " ".join([f"torchwise {name}", "[OPTIONS]" if len(command.params) > len(arguments) else "",
                          *(usage_name(p) for p in arguments)])
        out += [f"## `torchwise {name}`", "", first_line(command.help), "", "```text", " ".join(usage.split()),
                "```", "", "| argument or option | default | what it does |", "|---|---|---|"]
        for param in command.params:
            if param.param_type_name == "argument":
                flag = param.name.upper()
                default = "required" if param.required else ""
            else:
                flag = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
                default = "" if param.default in (None, False, [], ()) else f"`{param.default}`"
            flag = flag if flag.startswith("`") else f"`{flag}`"
            out.append(f"| {flag} | {cell(default)} | {cell(getattr(param, 'help', '') or '')} |")
        out.append("")
    return "\n".join(out)


GENERATORS: dict[str, Callable[[], str]] = {
    "config-keys": config_keys_table,
    "cli-reference": cli_reference,
}


def blocks(text: str) -> dict[str, str]:
    """name -> body of each generated block on a page."""
    return {m.group("name"): m.group("body") for m in MARKED.finditer(text)}


def regenerate(text: str) -> str:
    return MARKED.sub(lambda m: m.group(1) + GENERATORS[m.group("name")]() + m.group(4), text)


def pages_with_blocks() -> list[Path]:
    return [page for page in sorted(DOCS.glob("*.md")) if MARKED.search(page.read_text())]


if __name__ == "__main__":
    for page in pages_with_blocks():
        page.write_text(regenerate(page.read_text()))
        print(f"rewrote the generated tables of {page.relative_to(ROOT)}", file=sys.stderr)
