"""Evidence that one call of a shared train/evaluate function is an evaluation the file itself
runs under no_grad elsewhere (TW132's repeated evaluations): a mode string handed to the function
(``_model_loop(args, 'val', ...)``), and a no_grad entered through a name
(``ctx = ch.enable_grad() if disable_no_grad else ch.no_grad()``; ``with ctx:``)."""

from __future__ import annotations

import ast
import re

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext

# The whole string a shared loop is handed to evaluate: `'val'`, `"test"`, `mode="eval"`.
_EVAL_MODE = re.compile(r"^(val|valid|validate|validation|test|eval|evaluate|evaluation|dev)$", re.I)


def evaluation_mode_given(ctx: FileContext, call: ast.Call) -> bool:
    """``_model_loop(args, 'val', loader, ...)``: a function of this file handed an evaluation mode
    string for a parameter it compares (``is_train = (loop_type == 'train')``), so this call runs
    its evaluation branch whatever else the function does when it trains."""
    callee = ctx.callee(call)
    if callee is None:
        return False
    params = [a.arg for a in callee.args.args]
    if params and params[0] in {"self", "cls"} and isinstance(call.func, ast.Attribute):
        params = params[1:]
    given = [(params[i] if i < len(params) else None, v) for i, v in enumerate(call.args)]
    given += [(k.arg, k.value) for k in call.keywords]
    compared = {dotted(n) for c in ctx.walk(callee) if isinstance(c, ast.Compare) for n in ast.walk(c)}
    return any(
        name in compared and isinstance(v, ast.Constant) and isinstance(v.value, str) and _EVAL_MODE.match(v.value)
        for name, v in given
        if name is not None
    )


def same_constants(guarded: ast.Call, call: ast.Call) -> bool:
    """Every constant the guarded call is handed, ``call`` is handed too at the same place
    (``_model_loop(args, 'val', loader, model, None, 0, False, writer)`` repeats the guarded
    ``'val', ..., None, epoch, False``; the adversarial ``..., True`` evaluation, which needs
    input gradients, does not)."""
    for index, value in enumerate(guarded.args):
        if isinstance(value, ast.Constant):
            other = call.args[index] if index < len(call.args) else None
            if not (isinstance(other, ast.Constant) and other.value == value.value):
                return False
    theirs = {k.arg: k.value for k in call.keywords}
    for k in guarded.keywords:
        if isinstance(k.value, ast.Constant):
            other = theirs.get(k.arg)
            if not (isinstance(other, ast.Constant) and other.value == k.value.value):
                return False
    return True


def under_named_no_grad(ctx: FileContext, node: ast.AST) -> bool:
    """``with ctx:`` around ``node`` where ``ctx`` is given a no_grad (on one branch of a
    conditional at least: the file's default is autograd off there)."""
    for ancestor in ctx.ancestors(node):
        if not isinstance(ancestor, ast.With):
            continue
        for item in ancestor.items:
            name = dotted(item.context_expr)
            values = ctx.assignments.get(name, []) if name else []
            if any(ctx.is_no_grad(n) for v in values for n in ast.walk(v) if isinstance(n, ast.Call)):
                return True
    return False
