"""A weights load that says by what it does that it resumes: the same branch sets the number a
later training loop starts counting from (SASRec's ``if args.state_dict_path is not None:``
loads the weights and sets ``epoch_start_idx``, read by ``for epoch in range(epoch_start_idx,
...)``), whatever its option is called."""

from __future__ import annotations

import ast

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext, position


def continues_count(ctx: FileContext, load: ast.Call) -> bool:
    """``load`` sits in an ``if`` arm that also gives a value (not a constant) to a name that a
    later ``for ... in range(name, ...)`` of the same scope starts from, and that loop trains."""
    arm = _arm_of(ctx, load)
    if arm is None:
        return False
    given = {
        name
        for statement in arm
        for node in ast.walk(statement)
        if isinstance(node, ast.Assign) and not isinstance(node.value, ast.Constant)
        for target in node.targets
        if (name := dotted(target))
    }
    scope = ctx.scope_of(load)
    for loop in ctx.walk(scope):
        if not (isinstance(loop, ast.For) and position(loop) > position(load)):
            continue
        walked = loop.iter
        if not (isinstance(walked, ast.Call) and dotted(walked.func) == "range" and len(walked.args) >= 2):
            continue
        if dotted(walked.args[0]) in given and _trains(ctx, loop):
            return True
    return False


def _arm_of(ctx: FileContext, node: ast.AST) -> list[ast.stmt] | None:
    """The statements of the innermost ``if`` arm (body or else) that holds ``node``."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return None
        if isinstance(ancestor, ast.If) and child is not ancestor.test:
            return ancestor.body if child in ancestor.body else ancestor.orelse
        child = ancestor
    return None


def _trains(ctx: FileContext, loop: ast.For) -> bool:
    return any(ctx.is_backward(c) or ctx.is_optimizer_step(c) for c in ctx.reached_calls(loop, 1))
