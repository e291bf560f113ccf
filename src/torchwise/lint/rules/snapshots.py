"""A snapshot of an object's attributes: ``torch.load`` whose entries are written back as the
attributes of an object (``self.__dict__[k] = v``, ``setattr(self, k, v)``,
``self.__dict__.update(payload)``), as drqv2's ``load_snapshot`` does with the agent and the timer
``save_snapshot`` pickled. What comes back is whatever objects the attributes held, not tensors, so
``weights_only=True`` (the default since torch 2.6) refuses the file. Read by checkpoint.py (TW125)."""

from __future__ import annotations

import ast

from torchwise.lint.ast_names import dotted, method
from torchwise.lint.context import FileContext


def spread_into_object(ctx: FileContext, load: ast.Call) -> str | None:
    """How the result of ``load``, bound to a name in its scope, becomes an object's attributes
    (``self.__dict__[k] = v`` over its items, ``setattr``, ``__dict__.update``); None if it does not."""
    statement = ctx.statement(load)
    if not (isinstance(statement, ast.Assign) and statement.value is load and len(statement.targets) == 1):
        return None
    name = dotted(statement.targets[0])
    if name is None:
        return None
    for node in ctx.walk(ctx.scope_of(load)):
        if isinstance(node, ast.Call) and method(node) == "update" and _is_dict_of_object(node.func):
            if any(dotted(a) == name for a in node.args):
                return ast.unparse(node)
        if isinstance(node, ast.For) and _items_of(node.iter) == name and isinstance(node.target, ast.Tuple):
            value = dotted(node.target.elts[-1])
            for inner in (n for s in node.body for n in ast.walk(s)):
                if _sets_attribute(inner, value):
                    return ast.unparse(inner).splitlines()[0]
    return None


def _is_dict_of_object(func: ast.expr) -> bool:
    """``obj.__dict__.update``: the receiver is an object's ``__dict__``."""
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) and func.value.attr == "__dict__"


def _items_of(walked: ast.expr) -> str | None:
    """``payload`` of ``payload.items()``."""
    if isinstance(walked, ast.Call) and method(walked) == "items" and isinstance(walked.func, ast.Attribute):
        return dotted(walked.func.value)
    return None


def _sets_attribute(node: ast.AST, value: str | None) -> bool:
    """``obj.__dict__[k] = value`` or ``setattr(obj, k, value)``."""
    if value is None:
        return False
    if isinstance(node, ast.Assign) and dotted(node.value) == value:
        return any(
            isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute) and t.value.attr == "__dict__"
            for t in node.targets
        )
    if isinstance(node, ast.Call) and dotted(node.func) == "setattr" and len(node.args) == 3:
        return dotted(node.args[2]) == value
    return False
