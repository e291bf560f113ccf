"""A GradScaler that the file's own defaults leave off: ``GradScaler(enabled=(dtype == "float16"))``
with ``dtype = "bfloat16"`` (karpathy's llama2.c). Its lost scale on a resume costs nothing until
someone turns float16 on, and even then the scale re-calibrates in a few steps: TW131 reports such
a scaler, alone, as info."""

from __future__ import annotations

import ast

from torchwise.lint.ast_names import dotted, keyword
from torchwise.lint.context import FileContext


def scalers_off_by_default(ctx: FileContext) -> str | None:
    """The ``enabled=`` text when every GradScaler built here is off with the file's own values
    (a literal ``False``, a name only ever given false constants, or a comparison of such a name
    with a constant that fails for every value it is given); None otherwise."""
    built = [
        value
        for values in ctx.assignments.values()
        for value in values
        if isinstance(value, ast.Call) and (ctx.qualname(value.func) or "").endswith("GradScaler")
    ]
    enabled = [keyword(call, "enabled") for call in built]
    if not built or any(e is None or not _false_by_default(ctx, e) for e in enabled):
        return None
    return ast.unparse(enabled[0])  # type: ignore[arg-type]


def _constants(ctx: FileContext, node: ast.expr) -> list[object] | None:
    """Every value a name is given in the file, when all of them are constants."""
    if isinstance(node, ast.Constant):
        return [node.value]
    values = ctx.assignments.get(dotted(node) or "", [])
    if not values or not all(isinstance(v, ast.Constant) for v in values):
        return None
    return [v.value for v in values]  # type: ignore[attr-defined]


def _false_by_default(ctx: FileContext, test: ast.expr) -> bool:
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq | ast.NotEq):
        left, right = _constants(ctx, test.left), _constants(ctx, test.comparators[0])
        if left is None or right is None:
            return False
        equal = isinstance(test.ops[0], ast.Eq)
        return not any((a == b) == equal for a in left for b in right)
    values = _constants(ctx, test)
    return values is not None and not any(values)
