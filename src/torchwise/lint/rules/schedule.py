"""Rules about learning-rate schedulers: order against the optimizer, per-step or per-epoch."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, keyword
from torchwise.lint.context import FileContext, Loop, position
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.evidence import unread_reaching
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.data import argparse_default

_EPOCH_BASED = frozenset({"StepLR", "MultiStepLR", "ExponentialLR"})
_STEP_BASED = frozenset({"OneCycleLR", "CyclicLR"})
_STEP_WORDS = re.compile(r"step|iter|len\(", re.I)


def _optimizer_steps(ctx: FileContext, loop: ast.AST) -> list[tuple[int, int]]:
    """Where ``loop`` steps the optimizer: the step itself, or the call into a helper that does."""
    found = []
    for call in ctx.calls_in(loop):
        target = ctx.callee(call)
        inner = ctx.reached_calls(target, 1) if target is not None else []
        if ctx.is_optimizer_step(call) or any(ctx.is_optimizer_step(c) for c in inner):
            found.append(position(call))
        elif target is None and _trains_elsewhere(ctx, call):
            found.append(position(call))
    return found


def _trains_elsewhere(ctx: FileContext, call: ast.Call) -> bool:
    """``train(config, train_loader, model, criterion, optimizer, epoch, ...)``: a function of
    another file handed the optimizer and the training data (or named for training) steps the
    optimizer (human-pose-estimation's train.py, whose epoch loop steps its MultiStepLR first)."""
    values = [*call.args, *(k.value for k in call.keywords)]
    if not any(ctx.kind(v) == "optimizer" for v in values):
        return False
    name = (dotted(call.func) or "").rsplit(".", 1)[-1]
    return name.startswith("train") or any(ctx.kind(v) == "loader" for v in values)


@rule("TW112", Level.WARNING, hint="call scheduler.step() after optimizer.step()")
def scheduler_before_optimizer(ctx: FileContext) -> Iterator[Hit]:
    """``scheduler.step()`` before ``optimizer.step()`` in the same iteration.

    Why: since PyTorch 1.1 the scheduler expects to follow the optimizer; stepping it first
    skips the first value of the schedule (warm-up starts one step late, the initial LR is
    never used) and PyTorch warns about it. Stepped once per epoch, every epoch runs at the
    next epoch's LR and each decay comes an epoch early.
    Fix: ``optimizer.step()`` then ``scheduler.step()``.
    It also reports the first statement of a per-epoch function (one called inside a loop)
    that steps the scheduler before the loop that steps the optimizer (NRI's ``train(epoch)``).
    A step given its epoch (``scheduler.step(epoch)``, the pre-1.1 idiom) sets the LR from the
    epoch itself, so its place does not matter and it is not reported. A scheduler stepped
    every batch, in the loop that steps the optimizer, loses one step of thousands: info.
    A function of another file handed the optimizer and the training data (or named ``train``)
    counts as stepping it.
    Cannot see: steps made in helpers of other files that are not handed the optimizer, or a
    scheduler stepped on purpose once before training to set the first LR.
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
    """
    for call in ctx.calls:
        if not ctx.is_scheduler_step(call) or _explicit_epoch(call):
            continue
        loops = ctx.loops(call)
        if not loops:
            if _epoch_function_steps_later(ctx, call):
                yield Hit(call, "scheduler.step() runs before this epoch's optimizer steps (the loop below)")
            continue
        steps = _optimizer_steps(ctx, loops[0])
        if not steps or min(steps) < position(call):
            continue
        if _stepped_per_batch(ctx, call):
            message = "scheduler.step() runs before optimizer.step() every batch: the schedule's first step is lost"
            yield Hit(call, message, level=Level.INFO)
        else:
            earlier = [c for c in ctx.calls_in(loops[0]) if position(c) < position(call)]
            unseen = unread_reaching(ctx, earlier, {"optimizer"}, "steps the optimizer first")
            yield Hit(call, "scheduler.step() runs before optimizer.step() in this iteration", unseen=unseen)


def _epoch_function_steps_later(ctx: FileContext, call: ast.Call) -> bool:
    """``call`` sits outside any loop in a function that a loop of this file calls, and a loop
    after it in that function steps the optimizer: the function is one epoch."""
    function = ctx.function(call)
    if function is None or not any(ctx.callee(c) is function and ctx.loops(c) for c in ctx.calls):
        return False
    later = [n for n in ctx.walk(function) if isinstance(n, Loop) and position(n) > position(call)]
    return any(_optimizer_steps(ctx, loop) for loop in later)


def _schedule_kind(ctx: FileContext, scheduler: ast.expr | None) -> tuple[str, str] | None:
    """('epoch' | 'step', class name) for schedulers whose unit we can tell from their arguments."""
    key = dotted(scheduler) if scheduler is not None else None
    values = ctx.assignments.get(key or "", [])
    built = next((v for v in reversed(values) if isinstance(v, ast.Call)), None)
    if built is None:
        return None
    name = (ctx.qualname(built.func) or "").rsplit(".", 1)[-1]
    if name in _EPOCH_BASED:
        if _counts_iterations(ctx, built):
            return None
        return ("epoch", name) if _unit_readable(ctx, built) else ("epoch?", name)
    if name in _STEP_BASED or name.endswith("_schedule_with_warmup"):
        return "step", name
    if name == "CosineAnnealingLR":
        t_max = keyword(built, "T_max") or (built.args[1] if len(built.args) > 1 else None)
        text = ast.unparse(t_max) if t_max is not None else ""
        if _STEP_WORDS.search(text):  # epochs * len(loader) counts steps
            return "step", name
        return ("epoch", name) if "epoch" in text.lower() else None
    if name == "LambdaLR":
        schedule = keyword(built, "lr_lambda") or (built.args[1] if len(built.args) > 1 else None)
        target = ctx.functions.get(dotted(schedule) or "") if schedule is not None else None
        text = ast.unparse(target or schedule) if schedule is not None else ""
        if "warmup" in text.lower() and "step" in text.lower() and "epoch" not in text.lower():
            return "step", name
    return None


def _explicit_epoch(call: ast.Call) -> bool:
    """``scheduler.step(epoch)`` / ``scheduler.step(epoch + i / iters)``: the schedule is read
    at the epoch given, whatever the cadence."""
    return bool(call.args) or keyword(call, "epoch") is not None


def _unit_readable(ctx: FileContext, built: ast.Call) -> bool:
    """The step size or milestones are numbers this file shows (a literal, an argparse default,
    an expression of the epochs), so their unit can be told."""
    unit = _unit(ctx, built)
    if unit is None:
        return True  # StepLR's own default is not in play: an absent argument is a TypeError
    text = ast.unparse(unit).lower()
    return "epoch" in text or any(isinstance(n, ast.Constant) and isinstance(n.value, int) for n in ast.walk(unit))


def _unit(ctx: FileContext, built: ast.Call) -> ast.expr | None:
    positional = built.args[1] if len(built.args) > 1 else None
    unit = keyword(built, "milestones") or keyword(built, "step_size") or positional
    if isinstance(unit, ast.Attribute):
        default = argparse_default(ctx, unit.attr)
        unit = default if isinstance(default, ast.expr) else unit
    return unit


def _counts_iterations(ctx: FileContext, built: ast.Call) -> bool:
    """``MultiStepLR(opt, milestones=[60000, 80000])`` or ``StepLR(opt, cfg.max_iter // 3)``:
    a schedule written in iterations, stepped per batch on purpose. An option read from the
    command line counts by its argparse default (DeepLabV3Plus' ``--step_size``, 10000)."""
    unit = _unit(ctx, built)
    if unit is None:
        return False
    numbers = [n.value for n in ast.walk(unit) if isinstance(n, ast.Constant) and isinstance(n.value, int)]
    return bool(re.search(r"iter|len\(", ast.unparse(unit), re.I)) or (bool(numbers) and min(numbers) >= 1000)


def _stepped_per_batch(ctx: FileContext, call: ast.Call) -> bool | None:
    """True inside the loop that steps the optimizer, False one loop out, None if unclear."""
    loops = ctx.loops(call)
    if not loops:
        return None
    direct = [c for c in ctx.calls_in(loops[0]) if ctx.is_optimizer_step(c)]
    if any(ctx.loops(c)[0] is loops[0] for c in direct):
        return True
    return False if _optimizer_steps(ctx, loops[0]) else None


@rule(
    "TW113",
    Level.WARNING,
    hint="step epoch schedulers once per epoch and per-step ones every batch",
)
def scheduler_wrong_cadence(ctx: FileContext) -> Iterator[Hit]:
    """An epoch scheduler stepped every batch, or a per-step scheduler stepped once per epoch.

    Why: ``StepLR(step_size=30)`` stepped per batch decays after 30 batches instead of 30
    epochs, and ``CosineAnnealingLR(T_max=epochs)`` finishes its cosine in the first epoch;
    ``OneCycleLR`` or a warm-up written in steps, stepped per epoch, never leaves warm-up.
    Fix: match the call to the unit the schedule was written in (or rewrite it in steps).
    A StepLR / MultiStepLR written in iterations (milestones of 1000 or more, or built from
    ``max_iter`` / ``len(loader)``) stepped per batch is on purpose, and so is a scheduler
    stepped with an explicit epoch (``scheduler.step(epoch + i / iters)``).
    Cannot see: schedulers whose unit it cannot tell from their arguments (LambdaLR with an
    arbitrary function, CosineAnnealingLR with a plain number): those are not reported; a
    StepLR / MultiStepLR stepped per batch whose step size comes from a config or an option
    this file does not declare is reported as info.
    """
    for call in ctx.calls:
        if not ctx.is_scheduler_step(call) or _explicit_epoch(call):
            continue
        kind = _schedule_kind(ctx, receiver_of(call))
        per_batch = _stepped_per_batch(ctx, call)
        if kind is None or per_batch is None:
            continue
        unit, name = kind
        if unit == "epoch?" and per_batch:
            message = f"{name} is stepped every batch, with a step size set where lint cannot read it"
            yield Hit(call, f"{message}: if it counts epochs, it decays that many batches in", level=Level.INFO)
        elif unit == "epoch" and per_batch:
            yield Hit(call, f"{name} is written in epochs but stepped every batch")
        elif unit == "step" and not per_batch:
            yield Hit(call, f"{name} is written in steps but stepped once per epoch")
