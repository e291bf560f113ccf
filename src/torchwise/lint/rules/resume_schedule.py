"""An epoch scheduler built afresh on every start, in a file whose training loop continues from a
resumed epoch: its count starts at 0 while the loop's starts where the resume left off, so a
milestone or step schedule fires at the wrong epochs (Towards-Realtime-MOT's MultiStepLR, ENet's
StepLR, DCRNN's MultiStepLR against absolute milestones)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit
from torchwise.lint.rules.resume_count import resumed_counters


def restarted_schedules(ctx: FileContext) -> Iterator[Hit]:
    """A scheduler built here without ``last_epoch``, never restored, handed to nothing a resume
    calls, never set by hand or stepped with an argument, and stepped once per iteration of a
    loop that starts from a resumed counter (``range(start_epoch, n)``, or ``epoch +=
    start_epoch`` in its body): reported at the scheduler's constructor."""
    counters = resumed_counters(ctx)
    reported: set[str] = set()
    for step in ctx.calls:
        scheduler = receiver(step)
        name = dotted(scheduler)
        if not ctx.is_scheduler_step(step) or step.args or step.keywords or name is None or name in reported:
            continue
        built = [v for v in ctx.assignments.get(name, []) if isinstance(v, ast.Call)]
        if not built or ctx.constructor(scheduler) is None or any(k.arg == "last_epoch" for k in built[-1].keywords):
            continue
        loops = ctx.loops(step)
        if not loops or not isinstance(loops[0], ast.For) or _kept(ctx, name, loops[0]):
            continue
        start = _continued_from(loops[0], counters)
        if start is not None and not _offset_by(ctx, built[-1], start):
            reported.add(name)
            yield Hit(
                built[-1],
                f"{name} is built afresh and counts its steps from 0, while the loop on line {loops[0].lineno} "
                f"continues from {start} after a resume: the scheduler is not restored",
            )


def _offset_by(ctx: FileContext, built: ast.Call, start: str) -> bool:
    """The constructor reads the resumed counter, itself or in a function of this file it is
    given (PyTorch-GAN's ``LambdaLR(optimizer, lr_lambda=LambdaLR(n_epochs, opt.epoch, decay).step)``
    shifts the schedule by the epoch it starts from)."""
    roots: list[ast.AST] = [built]
    roots += [f for n in ast.walk(built) if isinstance(n, ast.Name) and (f := ctx.functions.get(n.id)) is not None]
    return any(dotted(n) == start for root in roots for n in ast.walk(root) if isinstance(n, ast.Name | ast.Attribute))


def _kept(ctx: FileContext, name: str, loop: ast.For) -> bool:
    """The schedule's place is kept some other way: its state loaded, an attribute of it set
    (``scheduler.last_epoch = ...``), a step with an argument, or a step outside ``loop`` (a
    fast-forward ``for _ in range(start_epoch): scheduler.step()``)."""
    for call in ctx.calls:
        if dotted(receiver(call)) != name:
            continue
        if method(call) == "load_state_dict" or (method(call) == "step" and (call.args or call.keywords)):
            return True
        if method(call) == "step" and (not ctx.loops(call) or ctx.loops(call)[0] is not loop):
            return True
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Attribute) and dotted(t.value) == name for t in node.targets)
        for node in ctx.nodes
    )


def _continued_from(loop: ast.For, counters: set[str]) -> str | None:
    """The resumed counter a loop starts from: ``range(start_epoch, n)``, or ``range(n)`` with
    ``epoch += start_epoch`` as it runs."""
    walked = loop.iter
    if isinstance(walked, ast.Call) and dotted(walked.func) == "range" and len(walked.args) >= 2:
        return _counter_in(walked.args[0], counters)
    target = dotted(loop.target)
    for node in loop.body:
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and dotted(node.target) == target:
            added = dotted(node.value)
            if added in counters:
                return added
    return None


def _counter_in(start: ast.expr, counters: set[str]) -> str | None:
    """The resumed counter a loop's start is made of: ``start_epoch`` itself, or the same count
    spelled as a sum (YOLOP's ``range(begin_epoch + 1, end)``: the epoch after the saved one)."""
    if dotted(start) in counters:
        return dotted(start)
    if not (isinstance(start, ast.BinOp) and isinstance(start.op, ast.Add)):
        return None
    sides = [dotted(side) for side in (start.left, start.right)]
    constant = any(isinstance(side, ast.Constant) for side in (start.left, start.right))
    return next((name for name in sides if name in counters), None) if constant else None
