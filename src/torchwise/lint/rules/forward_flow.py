"""What a model call's result and surroundings say about autograd: whether the result reaches
a backward, whether gradients are off (no_grad, or every parameter frozen) before it, whether its
input is an environment's observation, and which names speak of evaluation data. Shared by the
evaluation rules (eval_forward.py, eval_evidence.py)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from torchwise.lint.ast_names import dotted, is_constant, method, receiver
from torchwise.lint.context import FileContext, position
from torchwise.lint.rules.grad_scope import switched_off_before

# test_x, val_loader, evaluate, validate_epoch; not value, interval, latest or get_value.
EVAL_DATA_WORDS = re.compile(
    r"(^|_)(val|valid|validate|validation|test|eval|evaluate|evaluation|holdout)(_|$|\d)", re.I
)


def _targets(node: ast.Assign | ast.AugAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {d for t in targets for n in ast.walk(t) if (d := dotted(n))}


def feeds_backward(ctx: FileContext, call: ast.Call, scope: ast.AST) -> bool:
    """Whether ``call``'s result reaches a ``backward()`` later in ``scope`` (`flows_into`)."""
    statement = ctx.statement(call)
    if statement is not None and any(ctx.is_backward(c) for c in ctx.calls_in(statement)):
        return True
    return flows_into(ctx, call, scope, lambda c: _uses_grad(ctx, c)) is not None


def flows_into(ctx: FileContext, call: ast.Call, scope: ast.AST, sink: Callable[[ast.Call], bool]) -> ast.Call | None:
    """The first later call in ``scope`` for which ``sink`` holds and that is handed ``call``'s
    result: names are followed through assignments in source order, and a name assigned anew
    from something else stops carrying it (``pred`` of the test pass is not the ``pred`` trained
    on later). A sink in the statement of ``call`` itself counts (``compute(model(x), y)``)."""
    statement = ctx.statement(call)
    if statement is None:
        return None
    here = next((c for c in ctx.calls_in(statement) if c is not call and sink(c) and _encloses(c, call)), None)
    if here is not None:
        return here
    tainted = _targets(statement) if isinstance(statement, ast.Assign) else set()
    later = sorted(
        (
            n
            for n in ctx.walk(scope)
            if position(n) > position(statement)
            and (isinstance(n, ast.Assign | ast.AugAssign) or (isinstance(n, ast.Call) and sink(n)))
        ),
        key=position,
    )
    for node in later:
        used = {dotted(n) for n in ast.walk(node if isinstance(node, ast.Call) else node.value)}
        if isinstance(node, ast.Call):
            if used & tainted:
                return node
        elif used & tainted:
            tainted |= _targets(node)
        elif isinstance(node, ast.Assign):
            tainted -= _targets(node)
    return None


def _encloses(outer: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(outer))


def _uses_grad(ctx: FileContext, call: ast.Call) -> bool:
    """A backward, or a call into a function of this file that runs one (LoRA's
    ``optimizer_step(loss, ...)``): what is handed to it is trained on."""
    if ctx.is_backward(call) or method(call) == "requires_grad_" or "autograd.grad" in (dotted(call.func) or ""):
        return True
    target = ctx.callee(call)
    return target is not None and backpropagates(ctx, target)


def backpropagates(ctx: FileContext, root: ast.AST) -> bool:
    """A ``backward()`` in ``root`` or in the functions of this file it calls."""
    return any(ctx.is_backward(c) for c in ctx.reached_calls(root, 2))


def grad_off_before(ctx: FileContext, scope: ast.AST, node: ast.AST) -> bool:
    return switched_off_before(ctx, scope, node) or _frozen_before(ctx, scope, node)


def _frozen_before(ctx: FileContext, scope: ast.AST, node: ast.AST) -> bool:
    """Every parameter of the model ``node`` runs set ``requires_grad = False`` earlier in the
    scope (``for p in crnn.parameters(): p.requires_grad = False``, ``crnn.requires_grad_(False)``):
    nothing in the forward asks for a gradient, so no graph is kept (crnn.pytorch's ``val()``)."""
    model = dotted(node.func) if isinstance(node, ast.Call) else None
    if model is None:
        return False
    for earlier in ctx.walk(scope):
        if position(earlier) >= position(node):
            continue
        if isinstance(earlier, ast.Call) and method(earlier) == "requires_grad_" and earlier.args:
            if is_constant(earlier.args[0], False) and dotted(receiver(earlier)) == model:
                return True
        if isinstance(earlier, ast.For) and isinstance(earlier.iter, ast.Call) and method(earlier.iter) == "parameters":
            if dotted(receiver(earlier.iter)) != model:
                continue
            param = dotted(earlier.target)
            if any(
                isinstance(s, ast.Assign)
                and is_constant(s.value, False)
                and any(
                    isinstance(t, ast.Attribute) and t.attr == "requires_grad" and dotted(t.value) == param
                    for t in s.targets
                )
                for s in earlier.body
            ):
                return True
    return False


_ENVIRONMENT = re.compile(r"(^|[._])envs?$")


def from_environment(ctx: FileContext, call: ast.Call, scope: ast.AST) -> bool:
    """An argument given an environment's observation in the scope (``state = env.reset()``,
    ``state, reward, done, info = env.step(action)``): a policy acting one step at a time
    (Super-mario-bros-PPO's test.py), not an evaluation over a data set."""
    names = {dotted(a) for a in call.args} - {None}
    for node in ctx.walk(scope):
        if not isinstance(node, ast.Assign) or not names & {dotted(n) for t in node.targets for n in ast.walk(t)}:
            continue
        for inner in ast.walk(node.value):
            if isinstance(inner, ast.Call) and method(inner) in {"reset", "step"}:
                if _ENVIRONMENT.search(dotted(receiver(inner)) or ""):
                    return True
    return False
