"""What shows that a loop evaluates when no name says so: the model switched to ``eval()`` just
before it in the same function, nothing trained after it, and no caller here feeding what the
function returns into a backward (powerful-gnns' ``pass_data_iteratively(model, graphs)`` walks
``range(0, len(graphs), 64)`` after ``model.eval()``)."""

from __future__ import annotations

import ast

from torchwise.lint.context import FileContext, position
from torchwise.lint.findings import Hit, Level
from torchwise.lint.rules.callers import call_sites, used_here
from torchwise.lint.rules.eval_forward import feeds_backward, from_environment, grad_off_before
from torchwise.lint.rules.evaluation import uses_gradients
from torchwise.lint.rules.modes import last_mode_before


def evaluates_in_eval_mode(ctx: FileContext, loop: ast.AST, model_calls: list[ast.Call]) -> bool:
    """A ``for`` loop that runs ``model_calls`` after the model was switched to ``eval()`` in the
    same function, with nothing trained after it there, no call acting on an environment's
    observation (a policy playing, one state at a time), and no result handed to a backward:
    by the file's own say an evaluation, whatever its names."""
    if not isinstance(loop, ast.For) or not model_calls:
        return False
    scope = ctx.scope_of(loop)
    if last_mode_before(ctx, scope, loop) != "eval":
        return False
    after = [c for c in ctx.calls_in(scope) if position(c) > position(loop)]
    helpers = [i for c in after if (f := ctx.callee(c)) is not None for i in ctx.reached_calls(f, 1)]
    later = [*after, *ctx.reached_calls(loop), *helpers]
    if any(uses_gradients(ctx, c) for c in later):  # training, a saliency map, an attack
        return False
    if any(
        from_environment(ctx, c, scope) or feeds_backward(ctx, c, scope) or grad_off_before(ctx, scope, c)
        for c in model_calls
    ):  # a policy acting, a loss trained on, or parameters frozen (crnn.pytorch's val())
        return False
    function = ctx.function(loop)
    sites = call_sites(ctx, function) if function is not None else []
    return not any(feeds_backward(ctx, site, ctx.scope_of(site)) for site in sites)


def eval_mode_hit(ctx: FileContext, call: ast.Call, loop: ast.AST, function: ast.AST | None) -> Hit:
    """The report for a forward in a loop that only the model's ``eval()`` before it shows to be an
    evaluation: info where nothing in this file calls the function (a caller elsewhere may turn
    autograd off)."""
    what = f"{ast.unparse(call.func)}(...) runs in eval mode with autograd on in the loop on line {loop.lineno}"
    if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and not used_here(ctx, function):
        return Hit(call, f"{what}, unless a caller outside this file turns it off", level=Level.INFO)
    return Hit(call, f"{what}: no torch.no_grad() here, and nothing after it trains")
