"""What shows that a loop evaluates when no name says so: the model switched to ``eval()`` just
before it in the same function, nothing trained after it, and no caller here feeding what the
function returns into a backward (powerful-gnns' ``pass_data_iteratively(model, graphs)`` walks
``range(0, len(graphs), 64)`` after ``model.eval()``)."""

from __future__ import annotations

import ast

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext, position
from torchwise.lint.evidence import caller_outside
from torchwise.lint.findings import Hit, Unseen
from torchwise.lint.rules.callers import call_sites
from torchwise.lint.rules.evaluation import uses_gradients
from torchwise.lint.rules.forward_flow import EVAL_DATA_WORDS, feeds_backward, from_environment, grad_off_before
from torchwise.lint.rules.modes import last_mode_before


def evaluates_in_eval_mode(ctx: FileContext, loop: ast.AST, model_calls: list[ast.Call]) -> bool:
    """A ``for`` loop that runs ``model_calls`` after the model was switched to ``eval()`` in the
    same function, with nothing trained after it there, no call acting on an environment's
    observation (a policy playing, one state at a time), and no result handed to a backward:
    by the file's own say an evaluation, whatever its names."""
    if not isinstance(loop, ast.For) or not model_calls:
        return False
    return _nothing_trained_after(ctx, loop, model_calls)


def scores_in_eval_mode(ctx: FileContext, call: ast.Call) -> bool:
    """A single forward, outside any loop, after ``model.eval()`` in its function, whose output is
    then read together with evaluation data (``output[idx_val]``, ``labels[idx_test]``) and never
    trained on (pygcn's ``train()`` scores the validation nodes with the full-graph forward it
    makes after ``model.eval()``). A forward on one observation with no such data (a policy
    acting) is left alone."""
    statement = ctx.statement(call)
    if ctx.loops(call) or not isinstance(statement, ast.Assign):
        return False
    names = {n for t in statement.targets for part in ast.walk(t) if (n := dotted(part))}
    return _read_with_eval_data(ctx, statement, names) and _nothing_trained_after(ctx, call, [call])


def _read_with_eval_data(ctx: FileContext, statement: ast.Assign, names: set[str]) -> bool:
    """A later statement of the same scope reads one of ``names`` beside a name that says
    validation or test data, before the names are given anything else."""
    later = sorted(
        (s for s in ctx.walk(ctx.scope_of(statement)) if isinstance(s, ast.stmt) and position(s) > position(statement)),
        key=position,
    )
    for node in later:
        if isinstance(node, ast.Assign | ast.AugAssign | ast.Expr | ast.Return) and node.value is not None:
            read = {dotted(n) for n in ast.walk(node.value) if isinstance(n, ast.Name | ast.Attribute)}
            if names & read and any(EVAL_DATA_WORDS.search((r or "").rsplit(".", 1)[-1]) for r in read):
                return True
            if isinstance(node, ast.Assign) and names & {dotted(t) for t in node.targets}:
                return False
    return False


def _nothing_trained_after(ctx: FileContext, node: ast.AST, model_calls: list[ast.Call]) -> bool:
    loop = node
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


def eval_mode_hit(
    ctx: FileContext, call: ast.Call, loop: ast.AST | None, function: ast.AST | None, unseen: tuple[Unseen, ...] = ()
) -> Hit:
    """The report for a forward that only the model's ``eval()`` before it shows to be an
    evaluation: info where nothing in this file calls the function (a caller elsewhere may turn
    autograd off) or code lint cannot read may train on it (``unseen``)."""
    where = f"in the loop on line {loop.lineno}" if isinstance(loop, ast.stmt) else "on evaluation data"
    what = f"{ast.unparse(call.func)}(...) runs in eval mode with autograd on {where}"
    outside = caller_outside(ctx, function, "turns it off")
    if outside:
        return Hit(call, what, unseen=(*outside, *unseen))
    return Hit(call, f"{what}: no torch.no_grad() here, and nothing after it trains", unseen=unseen)
