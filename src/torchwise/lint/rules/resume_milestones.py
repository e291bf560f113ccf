"""TW152: a milestone index that starts at 0 while the loop it follows continues from a resumed count.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "if args.resume_epoch > 0:\\n"
...     "    start_iter = args.resume_epoch * epoch_size\\n"
...     "step_index = 0\\n"
...     "for iteration in range(start_iter, max_iter):\\n"
...     "    if iteration in stepvalues:\\n"
...     "        step_index += 1\\n"
...     "    lr = adjust_learning_rate(optimizer, gamma, step_index)\\n"
... )
>>> [(f.code, f.line) for f in lint_source(src) if f.code == "TW152"]
[('TW152', 3)]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext, position
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.resume_count import resumed_counters


@rule("TW152", Level.WARNING, hint="set the index from the resumed count (the milestones already passed)")
def milestone_index_restarts(ctx: FileContext) -> Iterator[Hit]:
    """A milestone index set to a constant while its loop continues from a resumed count.

    Why: an index into the LR milestones that moves only when the loop's counter reaches the next one
    (``if iteration in stepvalues: step_index += 1``, ``if epoch == lr_step[i]: i += 1``) starts at 0
    again on a resume, while the counter starts past the milestones already reached: the resumed run
    trains at the first learning rate (RFBNet), or, where the test is an equality with the index's
    milestone, never decays again (mvts_transformer's ``lr_step``).
    Fix: after the resume, count the milestones the start has passed
    (``step_index = sum(m <= start_iter for m in stepvalues)``), or use a scheduler and restore it.
    It reports the constant given to a name that the body of a ``for c in range(start, ...)`` loop
    adds to under an ``if`` comparing ``c`` with milestones (``c in M``, ``c == M[i]``), where
    ``start`` is set by a resume (a resume branch, or a call that hands back the model and its
    optimizer with it) and nothing gives the index another value.
    Cannot see: a schedule kept in another file (a helper given the epoch recomputes it), or an
    index restored through a dict of state.
    """
    resumed = resumed_counters(ctx) | _returned_with_the_model(ctx)
    for loop in (n for n in ctx.nodes if isinstance(n, ast.For)):
        start, counter = _counted_from(loop), dotted(loop.target)
        if start is None or counter is None or start not in resumed:
            continue
        for index in _milestone_indices(ctx, loop, counter):
            values = ctx.assignments.get(index, [])
            if "." not in index:  # a local name: its values in this function; self.x: anywhere
                values = [v for v in values if ctx.scope_of(v) is ctx.scope_of(loop)]
            if not values or not all(isinstance(v, ast.Constant) for v in values):
                continue  # given a value from the count somewhere: caught up
            inits = [v for v in values if ctx.scope_of(v) is ctx.scope_of(loop) and position(v) < position(loop)]
            if inits:
                statement = ctx.statement(inits[-1])
                what = f"{index} starts at {ast.unparse(inits[-1])} while the loop counts on from {start}"
                lost = "after a resume: the milestones already passed are not counted"
                yield Hit(statement or inits[-1], f"{what} {lost}")


def _counted_from(loop: ast.For) -> str | None:
    """``start`` of ``range(start, n)`` or ``range(start + 1, n)``, through ``tqdm(...)`` / ``enumerate(...)``."""
    walked = loop.iter
    while isinstance(walked, ast.Call) and dotted(walked.func) in {"tqdm", "tqdm.tqdm", "enumerate"} and walked.args:
        walked = walked.args[0]
    if not (isinstance(walked, ast.Call) and dotted(walked.func) == "range" and len(walked.args) >= 2):
        return None
    first = walked.args[0]
    if isinstance(first, ast.BinOp) and isinstance(first.op, ast.Add) and isinstance(first.right, ast.Constant):
        first = first.left
    return dotted(first)


def _milestone_indices(ctx: FileContext, loop: ast.For, counter: str) -> list[str]:
    """Names ``i`` with ``i += 1`` under an ``if`` in the loop that compares ``counter`` with
    milestones: ``counter in M`` or ``counter == M[i]``."""
    found = []
    for node in ctx.walk(loop):
        if not (isinstance(node, ast.If) and _compares_with_milestones(node.test, counter)):
            continue
        for inner in (n for s in node.body for n in ast.walk(s)):
            if isinstance(inner, ast.AugAssign) and isinstance(inner.op, ast.Add) and (name := dotted(inner.target)):
                found.append(name)
    return found


def _compares_with_milestones(test: ast.expr, counter: str) -> bool:
    for part in ast.walk(test):
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1):
            continue
        left, right = part.left, part.comparators[0]
        milestones = ast.Name | ast.Attribute | ast.Tuple | ast.List | ast.Set
        if isinstance(part.ops[0], ast.In) and dotted(left) == counter and isinstance(right, milestones):
            return True
        if isinstance(part.ops[0], ast.Eq) and counter in {dotted(left), dotted(right)}:
            other = right if dotted(left) == counter else left
            if isinstance(other, ast.Subscript) and not isinstance(other.slice, ast.Constant):
                return True  # epoch == config['lr_step'][lr_step]
    return False


def _returned_with_the_model(ctx: FileContext) -> set[str]:
    """Names unpacked from a call together with the model or its optimizer (mvts_transformer's
    ``model, optimizer, start_epoch = utils.load_model(...)``): a checkpoint loader's count."""
    names: set[str] = set()
    for node in ctx.nodes:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Tuple):
            continue
        parts = [p for p in target.elts if isinstance(p, ast.Name | ast.Attribute)]
        if any(ctx.kind(p) in {"model", "optimizer"} for p in parts):
            names |= {d for p in parts if ctx.kind(p) is None and (d := dotted(p))}
    return names
