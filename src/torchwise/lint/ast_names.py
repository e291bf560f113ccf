"""Small questions about one AST node that need no file around it: its dotted name, the method
and receiver of a call, a keyword's value, a literal, a modulo. `context.FileContext` and the
rules use them; they import nothing of the lint package.

>>> dotted(ast.parse("torch.cuda.amp.autocast").body[0].value)
'torch.cuda.amp.autocast'
"""

from __future__ import annotations

import ast


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None.

    >>> dotted(ast.parse("torch.cuda.amp.autocast").body[0].value)
    'torch.cuda.amp.autocast'
    """
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def method(call: ast.Call) -> str | None:
    """The method name of ``x.name(...)`` calls, else None."""
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def receiver(call: ast.Call) -> ast.expr | None:
    """The ``x`` of ``x.name(...)``, else None."""
    return call.func.value if isinstance(call.func, ast.Attribute) else None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    """The value passed as ``name=`` to a call, else None."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def is_constant(node: ast.AST | None, value: object) -> bool:
    """Whether ``node`` is the literal ``True``/``False``/``None`` given as ``value``."""
    return isinstance(node, ast.Constant) and node.value is value


def has_modulo(node: ast.AST) -> bool:
    """Whether an expression contains ``a % b`` (the mark of an every-k-steps condition)."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(node))
