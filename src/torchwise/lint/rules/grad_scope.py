"""Where autograd is off for code that evaluates: set by the code itself, or by every caller
of the function it sits in (a ``with torch.no_grad():`` around the call, a ``@torch.no_grad()``
on the calling function, ``torch.set_grad_enabled(False)`` earlier in the caller), followed up
the chain of callers of this file."""

from __future__ import annotations

import ast

from torchwise.lint.context import FileContext, position
from torchwise.lint.rules.callers import call_sites

Function = ast.FunctionDef | ast.AsyncFunctionDef


def switched_off_before(ctx: FileContext, scope: ast.AST, node: ast.AST) -> bool:
    """A statement ``torch.set_grad_enabled(False)`` (or a bare ``torch.no_grad()``) earlier in ``scope``."""
    return any(
        ctx.is_no_grad(c) and position(c) < position(node) and isinstance(ctx.parents.get(c), ast.Expr)
        for c in ctx.calls_in(scope)
    )


def grad_off_by_callers(ctx: FileContext, function: Function, seen: frozenset[int] = frozenset()) -> bool:
    """Every call of ``function`` in this file runs with autograd off: under no_grad, after it
    was switched off in the caller, or in a caller whose own callers all switch it off. False
    when nothing here calls it (its caller is in another file) or a cycle leaves it open."""
    if id(function) in seen:
        return False
    sites = call_sites(ctx, function)
    if not sites:
        return False
    for site in sites:
        if ctx.under_no_grad(site) or switched_off_before(ctx, ctx.scope_of(site), site):
            continue
        caller = ctx.function(site)
        if caller is None or not grad_off_by_callers(ctx, caller, seen | {id(function)}):
            return False
    return True
