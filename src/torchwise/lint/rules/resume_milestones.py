"""TW152: a milestone index or a decayed LR that starts afresh while its loop continues from a resumed count.

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
from torchwise.lint.rules.resume_sites import in_resume


@rule("TW152", Level.WARNING, hint="start the index or the LR from the resumed count (what it had passed), not afresh")
def milestone_index_restarts(ctx: FileContext) -> Iterator[Hit]:
    """A milestone index or a decayed LR set afresh while its loop continues from a resumed count.

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
    optimizer with it) and nothing gives the index another value; and, in the same loops, the
    setting or constant given before the loop to a value the body scales by itself (AttnGAN's
    ``lr = cfg.TRAIN.ENCODER_LR``, then ``lr *= 0.98`` each epoch) that nothing sets under a resume
    or from a count.
    Cannot see: a schedule kept in another file (a helper given the epoch recomputes it), or an
    index restored through a dict of state; a decay made by a helper (``lr = decay(lr)``).
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
        for name, decay in _decayed(ctx, loop):
            init = _fresh_start(ctx, loop, name, resumed)
            if init is not None:
                what = f"{name} starts at {ast.unparse(init)} while the loop counts on from {start}"
                lost = f"after a resume: the decay of line {decay.lineno}, applied once per pass, starts over"
                yield Hit(ctx.statement(init) or init, f"{what} {lost}")


_SHRINKS = ast.Mult | ast.Div | ast.FloorDiv


def _decayed(ctx: FileContext, loop: ast.For) -> list[tuple[str, ast.stmt]]:
    """Names the loop's body scales by itself (``lr *= 0.98``, ``lr = lr * gamma``, ``lr /= 10``):
    a decay whose running value is the only record of how far the schedule has gone."""
    found: list[tuple[str, ast.stmt]] = []
    for node in ctx.walk(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, _SHRINKS) and (name := dotted(node.target)):
            found.append((name, node))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and (name := dotted(node.targets[0])):
            value = node.value
            if isinstance(value, ast.BinOp) and isinstance(value.op, _SHRINKS) and dotted(value.left) == name:
                found.append((name, node))
    return found


def _fresh_start(ctx: FileContext, loop: ast.For, name: str, resumed: set[str]) -> ast.expr | None:
    """The value ``name`` is given before ``loop`` in its function when every value it is ever
    given outside its own decay is a constant or a setting (``cfg.TRAIN.ENCODER_LR``,
    ``args.lr``) and none is given under a resume or from a resumed count: the decay restarts."""
    values = [v for v in ctx.assignments.get(name, []) if ctx.scope_of(v) is ctx.scope_of(loop)]
    own = [v for v in values if not any(dotted(n) == name for n in ast.walk(v))]
    for value in own:
        if in_resume(ctx, value) or not (isinstance(value, ast.Constant) or dotted(value)):
            return None  # restored, or computed (from the epoch, the optimizer's param_groups)
        if dotted(value) in resumed or dotted(value) in ctx.functions:
            return None
    inits = [v for v in own if position(v) < position(loop) and not ctx.loops(v)]
    return inits[-1] if inits and len(inits) == len(own) else None


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
