"""Who calls a function of this file: where a rule's verdict depends on the caller, a function
nothing here calls is run from another file, whose no_grad or eval() lint cannot see."""

from __future__ import annotations

import ast

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext


def call_sites(ctx: FileContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
    """Calls of ``function`` in this file, by its name: ``evaluate(...)``, ``self.evaluate(...)``
    or ``self.policy.evaluate(...)`` (a method of another class of this file)."""
    return [
        c
        for c in ctx.calls
        if (isinstance(c.func, ast.Name) and c.func.id == function.name)
        or (isinstance(c.func, ast.Attribute) and c.func.attr == function.name)
    ]


def used_here(ctx: FileContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether this file calls the function or hands it on by name (``Engine(validation_step)``,
    ``add_event_handler(..., run_validation)``): if not, its caller is in another file."""
    return any(
        (isinstance(n, ast.Name) and n.id == function.name)
        or (isinstance(n, ast.Attribute) and n.attr == function.name)
        for n in ctx.nodes
    )


def handed_params(call: ast.Call, target: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> list[str]:
    """The parameters of ``target`` that ``call`` hands ``name`` to, by position or keyword
    (``self`` dropped for a method called on an object): ``test(model=model)`` gives ["model"]."""
    params = [a.arg for a in target.args.args]
    if params and params[0] in {"self", "cls"} and isinstance(call.func, ast.Attribute):
        params = params[1:]
    handed = [params[i] for i, a in enumerate(call.args) if i < len(params) and dotted(a) == name]
    return handed + [k.arg for k in call.keywords if k.arg in params and dotted(k.value) == name]
