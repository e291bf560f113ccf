"""Rules about torch 0.3 code that no longer runs: the ``async=`` keyword of ``.cuda()``.

>>> from torchwise.lint.engine import lint_source
>>> [(f.code, f.line) for f in lint_source("import torch\\ny = x.cuda(async=True)\\n")]
[('TW135', 2)]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.context import FileContext
from torchwise.lint.findings import Edit, Hit, Level
from torchwise.lint.legacy import PLACEHOLDER
from torchwise.lint.registry import rule


@rule("TW135", Level.ERROR, hint="use .cuda(non_blocking=True): async= is a syntax error since Python 3.7")
def async_keyword(ctx: FileContext) -> Iterator[Hit]:
    """``x.cuda(async=True)``: torch 0.3's keyword, a syntax error since Python 3.7.

    Why: ``async`` became a reserved word in Python 3.7, so a script that passes ``async=True``
    to ``.cuda()`` (or ``.to()``) does not even start: Python stops at the first one with
    "invalid syntax". torch renamed the argument ``non_blocking`` in 0.4.
    Fix: ``.cuda(non_blocking=True)``; ``torchwise lint --fix`` rewrites it.
    Lint reads the rest of such a file with the keyword renamed, so its other torch 0.3
    mistakes (``loss.data[0]``, ``Variable(x, volatile=True)``) are reported too.
    Cannot see: any other syntax error in the same file (lint then reports that one and stops,
    as Python does), nor Python 2 syntax (``print x``).
    """
    renamed = {line for line, _ in ctx.renamed_async}
    for node in ctx.nodes:
        if isinstance(node, ast.keyword) and node.arg == PLACEHOLDER and node.lineno in renamed:
            end = (node.lineno, node.col_offset + len(PLACEHOLDER))
            yield Hit(
                node,
                "async=True is a syntax error since Python 3.7 (torch 0.4 renamed it non_blocking)",
                edits=(Edit((node.lineno, node.col_offset), end, "non_blocking"),),
            )
