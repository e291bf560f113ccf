"""Saves that keep only the best weights so far: a ``torch.save`` run only when a score beats the
best one seen (``if test_accuracy > last_accuracy:`` whose arm then sets ``last_accuracy =
test_accuracy``), holding no run position (no epoch or step, no optimizer or scheduler). Reading
such a file back starts training again from the best weights: a warm start, not a resume
(LearningToCompare's few-shot scripts reload their best encoder and relation network, then train
from episode 0 with fresh optimizers, on purpose)."""

from __future__ import annotations

import ast
import re

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext
from torchwise.lint.rules.callers import call_sites

Function = ast.FunctionDef | ast.AsyncFunctionDef

_ORDER = (ast.Gt, ast.Lt, ast.GtE, ast.LtE)
# Checkpoint entries that say where a run stood: its epoch, step or episode, its optimizer's or
# scheduler's state.
_RUN_POSITION = re.compile(r"epoch|step|iter|episode|optim|sched", re.I)


def best_only(ctx: FileContext, save: ast.Call) -> bool:
    """``save`` runs only when a score beats the best so far (its own ``if``, or the ``if`` around
    every call here of the function it sits in) and writes nothing of the run's position."""
    if _carries_run_position(ctx, save):
        return False
    if _under_improvement(ctx, save):
        return True
    function = ctx.function(save)
    sites = call_sites(ctx, function) if function is not None else []
    return bool(sites) and all(_under_improvement(ctx, site) for site in sites)


def _under_improvement(ctx: FileContext, node: ast.AST) -> bool:
    """An ``if`` around ``node`` (its body arm, within its function) tests an improvement."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, Function | ast.ClassDef):
            return False
        if isinstance(ancestor, ast.If) and child in ancestor.body and _improvement(ctx, ancestor.test):
            return True
        child = ancestor
    return False


def _improvement(ctx: FileContext, test: ast.expr) -> bool:
    """``score > best`` (or a name given such a comparison, ``is_best = acc > best_acc``) where the
    scope rebinds one side to a value made from the other (``best = score``, ``best =
    max(score, best)``): the comparison keeps a best-so-far."""
    scope = ctx.scope_of(test)
    tests = [test]
    if isinstance(test, ast.Name):
        tests += [v for v in ctx.assignments.get(test.id, []) if ctx.scope_of(v) is scope]
    for part in (n for t in tests for n in ast.walk(t)):
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], _ORDER)):
            continue
        sides = [dotted(part.left), dotted(part.comparators[0])]
        if None in sides:
            continue
        if _rebinds(ctx, scope, sides[1], sides[0]) or _rebinds(ctx, scope, sides[0], sides[1]):
            return True
    return False


def _rebinds(ctx: FileContext, scope: ast.AST, bound: str | None, score: str | None) -> bool:
    """``bound = <something reading score>`` in ``scope`` (``global`` names included, at any depth)."""
    for node in ctx.walk(scope):
        if isinstance(node, ast.Assign) and any(dotted(t) == bound for t in node.targets):
            if any(dotted(n) == score for n in ast.walk(node.value)):
                return True
    return False


def _carries_run_position(ctx: FileContext, save: ast.Call) -> bool:
    """What ``save`` writes names an epoch, step or optimizer (a dict key, a value's name), read
    through a name given the dict in the same scope (``state = {...}; torch.save(state, p)``)."""
    saved = save.args[0] if save.args else None
    if saved is None:
        return True  # cannot tell: keep the resume
    values = [saved]
    if isinstance(saved, ast.Name):
        values += [v for v in ctx.assignments.get(saved.id, []) if ctx.scope_of(v) is ctx.scope_of(save)]
    for node in (n for v in values for n in ast.walk(v)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _RUN_POSITION.search(node.value):
            return True
        if isinstance(node, ast.Name | ast.Attribute) and ctx.kind(node) in {"optimizer", "scheduler", "scaler"}:
            return True
        if isinstance(node, ast.Name | ast.Attribute) and _RUN_POSITION.search((dotted(node) or "").rsplit(".", 1)[-1]):
            return True
    return False
