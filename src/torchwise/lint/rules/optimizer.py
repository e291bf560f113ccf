"""Rules about the optimizer's own state: rebuilt where it should persist, or resumed half-way.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "import torch\\n"
...     "opt = torch.optim.SGD(model.parameters(), 0.1)\\n"
...     "sched = torch.optim.lr_scheduler.StepLR(opt, 30, last_epoch=args.start_epoch - 1)\\n"
... )
>>> [f.code for f in lint_source(src)]
['TW133']
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword, method, receiver
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.kinds import OPTIMIZER_CLASSES, SCHEDULER_CLASSES
from torchwise.lint.registry import rule
from torchwise.lint.rules.resume import restoring_helpers


def _built_as(ctx: FileContext, call: ast.Call, classes: frozenset[str]) -> bool:
    return (ctx.qualname(call.func) or "").rsplit(".", 1)[-1] in classes


def _restored(ctx: FileContext, name: str | None, scope: ast.AST) -> bool:
    """``name.load_state_dict(...)`` in the same function (or module), or param groups given
    an ``initial_lr`` by hand anywhere."""
    if name is None:
        return True  # built inline or passed in: we cannot tell
    for call in ctx.calls_in(scope):
        if method(call) == "load_state_dict" and dotted(receiver(call)) == name:
            return True
    if any(name in {dotted(a) for a in call.args} for call in restoring_helpers(ctx)):
        return True  # vits' utils.load_checkpoint(path, net_g, optim_g) brings initial_lr back with it
    return any(isinstance(n, ast.Constant) and n.value == "initial_lr" for n in ctx.nodes)


@rule("TW133", Level.ERROR, hint="build the scheduler without last_epoch and restore it with scheduler.load_state_dict")
def scheduler_last_epoch_on_fresh_optimizer(ctx: FileContext) -> Iterator[Hit]:
    """A scheduler built with ``last_epoch=`` for an optimizer that is never restored.

    Why: ``last_epoch`` other than -1 tells the scheduler it is resuming, so it reads each
    param group's ``initial_lr``, which only a scheduler writes; on a freshly built optimizer
    the resume raises ``KeyError: "param 'initial_lr' is not specified in param_groups[0]
    when resuming an optimizer"``.
    Fix: build the scheduler as usual and ``scheduler.load_state_dict(ckpt["scheduler"])``
    (with ``optimizer.load_state_dict(ckpt["optimizer"])``) on resume.
    It reports ``last_epoch=`` that is not the constant -1 when the optimizer passed in has no
    ``load_state_dict`` in the file and no ``initial_lr`` is written by hand.
    A name only ever set to -1 counts as -1, and an optimizer handed to a checkpoint loader of
    another file (vits' ``utils.load_checkpoint(path, net_g, optim_g)``) counts as restored.
    Cannot see: an optimizer restored in another function or file (it is then reported
    wrongly), or that another ``last_epoch`` expression is -1 on every run the script makes.
    """
    for call in ctx.calls:
        if not _built_as(ctx, call, SCHEDULER_CLASSES):
            continue
        last = keyword(call, "last_epoch")
        if last is None or _always_minus_one(ctx, last) or not call.args:
            continue
        optimizer = call.args[0]
        if ctx.kind(optimizer) == "optimizer" and not _restored(ctx, dotted(optimizer), ctx.scope_of(call)):
            yield Hit(
                call,
                f"last_epoch={ast.unparse(last)} on a resume needs 'initial_lr' in "
                f"{ast.unparse(optimizer)}'s param groups, which a fresh optimizer lacks (KeyError)",
            )


def _always_minus_one(ctx: FileContext, node: ast.expr) -> bool:
    """``-1``, or a name only ever set to -1 (qfgaohao's pytorch-ssd: ``last_epoch = -1``,
    never changed: its resume does not restore the epoch)."""
    if isinstance(node, ast.Name):
        values = ctx.assignments.get(node.id, [])
        return bool(values) and all(_minus_one(v) for v in values)
    return _minus_one(node)


def _minus_one(node: ast.expr) -> bool:
    """``-1`` (a unary minus on 1 in the tree)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return is_constant(node.operand, 1)
    return is_constant(node, -1)


def _conditional(ctx: FileContext, node: ast.AST, stop: ast.AST) -> bool:
    """Under an ``if`` between ``node`` and ``stop``: rebuilt at a few epochs (LR drops) only."""
    return ctx.enclosing_if(node, stop) is not None


def _model_built_in(ctx: FileContext, call: ast.Call, scope: ast.AST) -> bool:
    """The model whose parameters the optimizer takes is built anew in ``scope`` too (a fold of
    cross-validation, a trial, a task): a fresh optimizer for a fresh model is right."""
    owners = {
        dotted(receiver(c))
        for c in ast.walk(call)
        if isinstance(c, ast.Call) and method(c) in {"parameters", "named_parameters"}
    } - {None}
    return any(
        isinstance(node, ast.Assign) and owners & {dotted(t) for t in node.targets}
        for node in ctx.walk(scope)
    )


def _rebuilt_each_epoch(ctx: FileContext, call: ast.Call) -> str | None:
    """Why ``call`` (an optimizer built) runs once per epoch, or None."""
    loops = ctx.loops(call)
    for loop in loops:
        if ctx.has_backward(loop) and not _conditional(ctx, call, loop) and not _model_built_in(ctx, call, loop):
            return "inside the epoch loop"
    function = ctx.function(call)
    if function is None or loops or _conditional(ctx, call, function) or not ctx.has_backward(function):
        return None
    if _model_built_in(ctx, call, function):
        return None
    sites = [c for c in ctx.calls if ctx.callee(c) is function]
    if any(ctx.loops(site) for site in sites):
        return f"in {function.name}(), which a loop calls each epoch"
    return None


def _stateless(ctx: FileContext, call: ast.Call) -> bool:
    """Plain ``SGD`` without momentum keeps no state: rebuilding it loses nothing (TRADES'
    pgd_attack builds ``optim.SGD([X_pgd], lr=1e-3)`` each attack step to zero the input's grad)."""
    if not (ctx.qualname(call.func) or "").endswith("SGD"):
        return False
    momentum = keyword(call, "momentum")
    return momentum is None or (isinstance(momentum, ast.Constant) and momentum.value in (0, 0.0))


@rule("TW134", Level.WARNING, hint="build the optimizer once, before the epoch loop; set the LR in its param groups")
def optimizer_rebuilt_each_epoch(ctx: FileContext) -> Iterator[Hit]:
    """A new optimizer built every epoch, throwing away its momentum / Adam moments.

    Why: SGD's momentum buffers and Adam's running moments are the optimizer's state; a new
    optimizer per epoch starts them from zero each time (Adam's bias correction restarts
    too), so every epoch begins with a different, noisier update than the one before.
    Fix: build the optimizer once before the loop; change the LR with a scheduler or
    ``for g in optimizer.param_groups: g["lr"] = lr``.
    It reports an optimizer constructor in a loop that trains, or in a training function
    (it holds a backward) that a loop calls. One rebuilt under an ``if`` (at the few epochs
    where the LR drops) is taken for a choice, and so is one built with a fresh model in the
    same loop or function (a fold of cross-validation, a tuning trial).
    Plain SGD without momentum keeps no state and is not reported.
    Cannot see: a rebuild in a helper of another file; per-task optimizers of meta-learning
    built in a loop look the same and are reported.
    """
    for call in ctx.calls:
        if not _built_as(ctx, call, OPTIMIZER_CLASSES) or _stateless(ctx, call):
            continue
        where = _rebuilt_each_epoch(ctx, call)
        if where is not None:
            yield Hit(call, f"a new optimizer is built {where}: its momentum / moments restart from zero")
