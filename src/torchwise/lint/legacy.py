"""Read torch 0.3 scripts that Python 3.7+ refuses only because ``async`` became a keyword.

torch 0.3 code moves batches with ``target.cuda(async=True)``; since Python 3.7 that is a syntax
error, and the rest of the file, usually full of other torch 0.3 mistakes (``loss.data[0]``,
``Variable(x, volatile=True)``), would go unread. `rename_async_keywords` renames each such
keyword argument to a placeholder of the same length, so every other line and column stays where
it was; the engine lints the renamed text and TW135 reports each renamed keyword.

>>> text, renamed = rename_async_keywords("y = x.cuda(async=True)\\n")
>>> text, renamed
('y = x.cuda(_sync=True)\\n', ((1, 11),))
"""

from __future__ import annotations

import io
import tokenize

# Same length as "async", so columns after it on the line do not move.
PLACEHOLDER = "_sync"


def rename_async_keywords(source: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The source with each ``async=`` keyword argument renamed, and where each one was
    (line 1-based, column 0-based); the source unchanged and ``()`` when there is none."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.NL]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source, ()
    places = tuple(
        token.start
        for before, token, after in zip(tokens, tokens[1:], tokens[2:], strict=False)
        if token.type == tokenize.NAME
        and token.string == "async"
        and before.string in {"(", ","}
        and after.string == "="
    )
    if not places:
        return source, ()
    lines = source.splitlines(keepends=True)
    for line, col in places:
        text = lines[line - 1]
        lines[line - 1] = text[:col] + PLACEHOLDER + text[col + len(PLACEHOLDER) :]
    return "".join(lines), places


_PRINT_STATEMENT = "Missing parentheses in call to 'print'"


def parenthesise_print_statements(source: str, limit: int = 500) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The source with each Python 2 ``print x`` statement read as ``print(x)``, and where each
    one was; the source unchanged and ``()`` when the file has another syntax error first.

    ``print`` becomes ``print(`` (same length) and ``)`` closes the line, so every other line and
    column stays put. A statement that goes on past its line (a backslash, an open bracket) or
    that is not a plain call once parenthesised (``print >>f, x``) is left, and the file with it.

    >>> parenthesise_print_statements("x = 1\\nprint x  # shown\\n")
    ('x = 1\\nprint(x)  # shown\\n', ((2, 0),))
    """
    lines = source.splitlines(keepends=True)
    places: list[tuple[int, int]] = []
    for _ in range(limit):
        try:
            compile("".join(lines), "<py2>", "exec", dont_inherit=True, flags=0x400)  # ast only
            return "".join(lines), tuple(places)
        except SyntaxError as err:
            if not (err.msg or "").startswith(_PRINT_STATEMENT) or not err.lineno:
                return source, ()
            line = lines[err.lineno - 1]
            col = len(line) - len(line.lstrip())
            rewritten = _parenthesised(line, col)
            if rewritten is None or (err.lineno, col) in places:
                return source, ()
            lines[err.lineno - 1] = rewritten
            places.append((err.lineno, col))
    return source, ()


def _parenthesised(line: str, col: int) -> str | None:
    """``print x  # c`` -> ``print(x)  # c``; None where the statement is not one line."""
    if not line[col:].startswith("print ") or line[col + 6 : col + 8] == ">>":
        return None
    body, newline = line.rstrip("\r\n"), line[len(line.rstrip("\r\n")) :]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(body[col:] + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None  # an open bracket or a backslash: the statement goes on
    comments = [t for t in tokens if t.type == tokenize.COMMENT]
    end = col + comments[0].start[1] if comments else len(body)
    code = body[:end].rstrip()
    if code.endswith("\\"):
        return None
    return code[:col] + "print(" + code[col + 6 :] + ")" + body[len(code) :] + newline
