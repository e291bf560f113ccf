"""TW132, followed into the functions of the file: a helper that runs the model (``sample(net,
n, device)``) called with autograd on from a function that has just put the model in eval mode
(real-nvp's ``test()`` closes its ``no_grad`` block, then draws samples through ``sample()``)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from torchwise.lint.context import FileContext, position
from torchwise.lint.findings import Hit
from torchwise.lint.rules.callers import call_sites
from torchwise.lint.rules.evaluation import evaluation_loops
from torchwise.lint.rules.forward_flow import EVAL_DATA_WORDS, backpropagates, feeds_backward, grad_off_before
from torchwise.lint.rules.grad_scope import grad_off_by_callers
from torchwise.lint.rules.modes import direct_mode

Function = ast.FunctionDef | ast.AsyncFunctionDef


def helper_forwards(ctx: FileContext, is_model: Callable[[FileContext, ast.expr], bool]) -> Iterator[Hit]:
    """Call sites, in eval mode and with autograd on, of a function of this file that runs the
    model with autograd on and trains nothing; ``is_model(ctx, func)`` says whether a callee
    expression is a model (TW132's ``model_object``). Functions named for evaluation are left to
    TW132's own reading of them, and a module's own methods (``forward``) to the model."""
    loops = [loop for loop, no_grad in evaluation_loops(ctx) if not no_grad]  # TW104 names them
    for function in {id(f): f for f in ctx.functions.values()}.values():
        if function.name == "forward" or EVAL_DATA_WORDS.search(function.name) or _trains(ctx, function):
            continue
        forwards = [
            c
            for c in ctx.calls_in(function)
            if is_model(ctx, c.func)
            and not ctx.under_no_grad(c)
            and not grad_off_before(ctx, function, c)
            and not feeds_backward(ctx, c, function)
        ]
        if not forwards:
            continue
        for site in call_sites(ctx, function):
            if _evaluating_site(ctx, site) and not any(loop in ctx.ancestors(site) for loop in loops):
                model = ast.unparse(forwards[0].func)
                what = f"{ast.unparse(site.func)}(...) runs {model}(...) (line {forwards[0].lineno}) with autograd on"
                yield Hit(site, f"{what}, after eval() here and outside torch.no_grad()")


def _evaluating_site(ctx: FileContext, site: ast.Call) -> bool:
    """A call made in eval mode (the last ``eval()``/``train()`` before it in its scope is
    ``eval()``), with autograd on there and its result never trained on."""
    scope = ctx.scope_of(site)
    if ctx.under_no_grad(site) or grad_off_before(ctx, scope, site) or feeds_backward(ctx, site, scope):
        return False
    caller = ctx.function(site)
    if caller is not None and grad_off_by_callers(ctx, caller):
        return False
    # An eval() written in this scope, not one a function it calls makes.
    switches = [mode for c in ctx.calls_in(scope) if position(c) < position(site) and (mode := direct_mode(ctx, c))]
    return bool(switches) and switches[-1] == "eval"


def _trains(ctx: FileContext, function: Function) -> bool:
    """A backward in it or its callees, or an optimizer or a scaler within reach (a step taken
    through a wrapper: Swin's ``loss_scaler(loss, optimizer, ...)``)."""
    if backpropagates(ctx, function):
        return True
    names = (n for n in ctx.walk(function) if isinstance(n, ast.Name | ast.Attribute))
    return any(ctx.kind(n) in {"optimizer", "scaler"} for n in names)
