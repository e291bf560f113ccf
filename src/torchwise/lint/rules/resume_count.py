"""The counters a resume continues from, and the weights loads that say by what they do that they
resume: a load whose branch sets the number a later training loop starts counting from (SASRec's
``if args.state_dict_path is not None:`` loads the weights and sets ``epoch_start_idx``, read by
``for epoch in range(epoch_start_idx, ...)``), or a load run only when that number says so
(DCRNN's ``if self._epoch_num > 0: self.load_model()``, then ``range(self._epoch_num, epochs)``),
whatever its option is called."""

from __future__ import annotations

import ast

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext, position
from torchwise.lint.rules.resume_sites import in_resume, restores_weights

Function = ast.FunctionDef | ast.AsyncFunctionDef


def continues_count(ctx: FileContext, load: ast.Call) -> bool:
    """``load`` is tied (see ``_tied_names``) to a name that a ``for ... in range(name, ...)``
    after it starts from, and that loop trains."""
    names = _tied_names(ctx, load)
    return any(
        _trains(ctx, loop) for loop in ctx.nodes if isinstance(loop, ast.For) and _counts_from(ctx, loop, load, names)
    )


def resumed_counters(ctx: FileContext) -> set[str]:
    """Names a resume sets from what it loaded (``start_epoch = checkpoint['epoch']`` under ``if
    args.resume:``), and names tied to a weights load that a training loop counts from."""

    def collect() -> set[str]:
        names = {
            n
            for node in ctx.nodes
            if isinstance(node, ast.Assign) and not isinstance(node.value, ast.Constant) and in_resume(ctx, node)
            for t in node.targets
            for part in ast.walk(t)
            if (n := dotted(part))
        }
        for load in ctx.calls:
            if restores_weights(ctx, load) and continues_count(ctx, load):
                names |= _tied_names(ctx, load)
        return names

    return ctx.memo("resumed_counters", collect)


def _counts_from(ctx: FileContext, loop: ast.For, load: ast.Call, names: set[str]) -> bool:
    walked = loop.iter
    if not (isinstance(walked, ast.Call) and dotted(walked.func) == "range" and len(walked.args) >= 2):
        return False
    start = dotted(walked.args[0])
    if start not in names:
        return False
    if "." in start:  # self._epoch_num, args.start_epoch: the same value wherever it is read
        return True
    return ctx.scope_of(loop) is ctx.scope_of(load) and position(loop) > position(load)


def _tied_names(ctx: FileContext, load: ast.Call) -> set[str]:
    """Names given a value (not a constant) in the ``if`` arm that holds ``load`` (or, outside any
    ``if``, in the function it sits in), and names tested by the ``if`` that guards it or guards a
    call of the function of this file it sits in."""
    names: set[str] = set()
    arm = _arm_of(ctx, load)
    if arm is None and (function := ctx.function(load)) is not None:
        arm = function.body  # a loader function that sets the count itself (ENAS's load_model())
    for statement in arm or []:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign) and not isinstance(node.value, ast.Constant):
                names |= {n for t in node.targets for part in ast.walk(t) if (n := dotted(part))}
    guarded = [load]
    function = ctx.function(load)
    if function is not None:
        guarded += [c for c in ctx.calls if ctx.callee(c) is function]
    for node in guarded:
        for test in _guards(ctx, node):
            names |= {n for part in ast.walk(test) if isinstance(part, ast.Name | ast.Attribute) if (n := dotted(part))}
    return names


def _guards(ctx: FileContext, node: ast.AST) -> list[ast.expr]:
    """The tests of the ``if`` statements around ``node`` in its function (its body arm only)."""
    tests = []
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, Function | ast.ClassDef):
            break
        if isinstance(ancestor, ast.If) and child in ancestor.body:
            tests.append(ancestor.test)
        child = ancestor
    return tests


def _arm_of(ctx: FileContext, node: ast.AST) -> list[ast.stmt] | None:
    """The statements of the innermost ``if`` arm (body or else) that holds ``node``."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, Function | ast.ClassDef):
            return None
        if isinstance(ancestor, ast.If) and child is not ancestor.test:
            return ancestor.body if child in ancestor.body else ancestor.orelse
        child = ancestor
    return None


def _trains(ctx: FileContext, loop: ast.For) -> bool:
    return any(ctx.is_backward(c) or ctx.is_optimizer_step(c) for c in ctx.reached_calls(loop, 1))
