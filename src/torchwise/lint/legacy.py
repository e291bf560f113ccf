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
