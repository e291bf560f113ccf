"""Parse files, run every selected rule, drop what ``# noqa`` or the config silences.

>>> findings = lint_source("import torch\\nstate = torch.load('m.pt')\\n", "train.py")
>>> [(f.code, f.line, f.level.value) for f in findings]
[('TW110', 2, 'info')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from torchwise.errors import LintError
from torchwise.lint.config import LintConfig, check_codes, load_config
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Finding, Hit, graded
from torchwise.lint.legacy import parenthesise_print_statements, rename_async_keywords
from torchwise.lint.registry import Rule
from torchwise.lint.rules import all_rules

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.I)
_SKIPPED_DIRS = frozenset({".git", ".venv", "venv", "__pycache__", "node_modules", ".tox", "build"})


def noqa_lines(source: str) -> dict[int, frozenset[str] | None]:
    """Line -> codes silenced there (None: a bare ``# noqa`` silences every code)."""
    silenced: dict[int, frozenset[str] | None] = {}
    for number, line in enumerate(source.splitlines(), start=1):
        if "noqa" not in line.lower():
            continue
        match = _NOQA.search(line)
        if match:
            codes = match.group("codes")
            silenced[number] = (
                frozenset(c.strip().upper() for c in codes.split(",")) if codes else None
            )
    return silenced


def _to_finding(rule: Rule, hit: Hit, path: str) -> Finding:
    level, message = graded(hit, rule.level)  # info where code lint cannot read could make it wrong
    return Finding(
        code=rule.code,
        level=level,
        path=path,
        line=hit.node.lineno,  # type: ignore[attr-defined]
        col=hit.node.col_offset + 1,  # type: ignore[attr-defined]
        message=message,
        fix=hit.hint or rule.hint,
        edits=hit.edits,
    )


def parse(source: str, path: str) -> FileContext:
    """The file's context, or `LintError` naming the file and the syntax error.

    A file that fails only on torch 0.3's ``.cuda(async=True)`` is read with those keywords
    renamed (`rename_async_keywords`); TW135 reports them. One that fails only on Python 2's
    ``print x`` statements is read with them parenthesised; TW144 reports the first.
    """
    try:
        return FileContext.parse(source, path)
    except ValueError as err:  # null bytes: a binary file named .py
        raise LintError(f"{path}: cannot parse: {err}", hint="lint only Python source") from err
    except SyntaxError as err:
        renamed, places = rename_async_keywords(source)
        printed, prints = parenthesise_print_statements(renamed)
        if places or prints:
            try:
                ctx = FileContext.parse(printed, path)
            except SyntaxError:
                pass  # another syntax error too: report the first one, as Python does
            else:
                ctx.renamed_async, ctx.print_statements = places, prints
                return ctx
        where = f"{path}:{err.lineno}:{err.offset}" if err.lineno else path
        raise LintError(
            f"{where}: cannot parse: {err.msg}",
            hint="fix the syntax error first; torchwise lint reads the file with Python's parser",
        ) from err


def _one_per_statement(ctx: FileContext, hits: Iterable[Hit]) -> Iterator[Hit]:
    """The first hit of a rule in each statement: ``print(a.item(), b.item())`` spread over
    five lines is one mistake, reported once."""
    seen: set[int] = set()
    for hit in hits:
        statement = ctx.statement(hit.node)
        if statement is not None and id(statement) in seen:
            continue
        if statement is not None:
            seen.add(id(statement))
        yield hit


def lint_source(
    source: str,
    path: str = "<string>",
    *,
    config: LintConfig | None = None,
) -> list[Finding]:
    """Findings for one file's text, sorted by position, after noqa and config filtering.

    >>> lint_source("x = 1\\n")
    []
    """
    config = config or LintConfig()
    ctx = parse(source, path)
    silenced = noqa_lines(source)
    findings: list[Finding] = []
    for rule in all_rules().values():
        if not config.allows(rule.code, path):
            continue
        for hit in _one_per_statement(ctx, rule.check(ctx)):
            finding = _to_finding(rule, hit, path)
            codes = silenced.get(finding.line, frozenset())
            if finding.line in silenced and (codes is None or finding.code in codes):
                continue
            findings.append(finding)
    unique = {(f.code, f.line, f.col, f.message): f for f in findings}
    return sorted(unique.values(), key=lambda f: (f.line, f.col, f.code))


def python_files(paths: Iterable[Path], errors: list[LintError] | None = None) -> list[Path]:
    """The ``.py`` files named or found below the given folders, in a stable order.

    A path that does not exist raises `LintError`, or, with an ``errors`` list, is recorded
    there and the other paths are still collected.
    """
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(
                p
                for p in sorted(path.rglob("*.py"))
                if not _SKIPPED_DIRS.intersection(p.relative_to(path).parts[:-1])
            )
        elif path.is_file():
            files.append(path)
        else:
            error = LintError(f"{path}: no such file or folder", hint="check the path you passed")
            if errors is None:
                raise error
            errors.append(error)
    return files


def configured_files(
    paths: Sequence[str | Path],
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    use_config: bool = True,
    errors: list[LintError] | None = None,
) -> Iterator[tuple[Path, str, LintConfig]]:
    """Each file with its text and the config that governs it (pyproject + command line).

    With an ``errors`` list, a file that cannot be read is recorded there and skipped;
    without one, it raises `LintError`.
    """
    for file in python_files((Path(p) for p in paths), errors):
        config = load_config(file) if use_config else LintConfig()
        if select:
            config = replace(config, select=check_codes(tuple(select), "--select"))
        config = replace(config, ignore=config.ignore + check_codes(tuple(ignore), "--ignore"))
        try:
            source = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            error = LintError(f"{file}: cannot read: {err}", hint="lint only UTF-8 text files")
            if errors is None:
                raise error from err
            errors.append(error)
            continue
        yield file, source, config


def lint_paths(
    paths: Sequence[str | Path],
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    use_config: bool = True,
    errors: list[LintError] | None = None,
) -> list[Finding]:
    """Lint files and folders; ``select`` replaces the config's selection, ``ignore`` adds to it.

    With an ``errors`` list, a file that cannot be read or parsed is recorded there and the
    others are still linted (one broken file must not hide the findings of the rest).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "t.py").write_text("import torch\\ntorch.save(model, 'm.pt')\\n")
    >>> [f.code for f in lint_paths([folder])]
    ['TW111']
    """
    findings: list[Finding] = []
    files = configured_files(paths, select=select, ignore=ignore, use_config=use_config, errors=errors)
    for file, source, config in files:
        try:
            findings.extend(lint_source(source, str(file), config=config))
        except LintError as error:
            if errors is None:
                raise
            errors.append(error)
    return findings
