"""TW143: a key read from a settings dict that the file never puts in it.

>>> from torchwise.lint.engine import lint_source
>>> src = "args = {'lr': 0.01, 'crop_size': 473}\\nsize = args['shorter_size']\\n"
>>> [(f.code, f.line) for f in lint_source(src)]
[('TW143', 2)]
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, method
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule

# Calls that read a dict without adding keys to it.
_READERS = frozenset({"print", "str", "repr", "len", "format", "write", "info", "debug", "warning", "dumps", "dump"})


@rule("TW143", Level.ERROR, hint="add the key to the dict where it is written, or read it with .get(key, default)")
def missing_settings_key(ctx: FileContext) -> Iterator[Hit]:
    """``args['shorter_size']`` read from a dict literal of settings that never gets that key.

    Why: the read raises ``KeyError`` when it runs, often in a validation or test path that
    the first hours of training never reach (pytorch-semantic-segmentation's
    ``validate()`` reads ``args['shorter_size']``, which its ``args = {...}`` lacks).
    Fix: add the key to the literal, or read it with ``.get(key, default)``.
    It reports a module-level name given once a dict literal with string keys, read with a
    constant key that neither the literal nor any ``d['key'] = ...`` in the file writes, when
    the dict is never updated (``.update``, ``setdefault``, ``|=``) and never handed to a
    function of another file.
    Cannot see: keys added through another name the dict is bound to under a different key,
    or by code of another file.
    """
    for name, values in ctx.assignments.items():
        if len(values) != 1 or not isinstance(values[0], ast.Dict) or "." in name:
            continue
        literal = values[0]
        if not literal.keys or not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in literal.keys):
            continue
        if not _at_module_level(ctx, literal) or _changed_elsewhere(ctx, name):
            continue
        keys = {k.value for k in literal.keys if isinstance(k, ast.Constant)} | _stored_keys(ctx)
        for node in ctx.nodes:
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Load)
                and dotted(node.value) == name
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)
                and node.slice.value not in keys
            ):
                where = f"the dict {name} (line {literal.lineno}) never gets that key"
                yield Hit(node, f"{name}[{node.slice.value!r}]: {where}")


def _at_module_level(ctx: FileContext, node: ast.AST) -> bool:
    return isinstance(ctx.statement(node), ast.Assign) and ctx.parents.get(ctx.statement(node)) is ctx.tree


def _stored_keys(ctx: FileContext) -> set[str]:
    """Every constant key written anywhere in the file (``d['key'] = ...``, through any name)."""
    return {
        str(n.slice.value)
        for n in ctx.nodes
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store | ast.Del) and isinstance(n.slice, ast.Constant)
    }


def _changed_elsewhere(ctx: FileContext, name: str) -> bool:
    """Updated in bulk, or handed to code lint cannot read."""
    for node in ctx.nodes:
        if isinstance(node, ast.AugAssign) and dotted(node.target) == name:
            return True
        if not isinstance(node, ast.Call):
            continue
        if method(node) in {"update", "setdefault", "__setitem__"} and dotted(node.func.value) == name:  # type: ignore[attr-defined]
            return True
        given = [*node.args, *(k.value for k in node.keywords)]
        if not any(dotted(a) == name for a in given):
            continue
        callee = (dotted(node.func) or "").rsplit(".", 1)[-1]
        if ctx.callee(node) is None and callee not in _READERS and callee not in _BUILTINS:
            return True
    return False


_BUILTINS = frozenset(dir(builtins))
