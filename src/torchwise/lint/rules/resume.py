"""TW131: a resume that brings back the weights but not the optimizer, scaler or schedule."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.context import FileContext, dotted, keyword, method, position, receiver
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.data import argparse_option

_RESUME_WORDS = re.compile(r"resume|restart|continue|checkpoint", re.I)
# `net.load(path)`: a model's own loader (qfgaohao's pytorch-ssd) restores its weights too.
_LOADS = frozenset({"load_state_dict", "load_weights", "load"})


def in_resume(ctx: FileContext, node: ast.AST) -> bool:
    """Inside a resume branch (``if args.resume:``, or an option whose help says so:
    apex's dcgan ``--netG``, "path to netG (to continue training)") or function
    (``def resume():``, ``def load_checkpoint():``)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.If) and (
            _RESUME_WORDS.search(ast.unparse(ancestor.test)) or _resume_option(ctx, ancestor.test)
        ):
            return True
        if isinstance(ancestor, ast.FunctionDef | ast.AsyncFunctionDef) and _RESUME_WORDS.search(ancestor.name):
            return True
    return False


def _resume_option(ctx: FileContext, test: ast.expr) -> bool:
    """An ``if`` on a command-line option whose ``help=`` speaks of resuming."""
    for node in ast.walk(test):
        declared = argparse_option(ctx, node.attr) if isinstance(node, ast.Attribute) else None
        text = keyword(declared, "help") if declared is not None else None
        if isinstance(text, ast.Constant) and _RESUME_WORDS.search(str(text.value)):
            return True
    return False


def _built(ctx: FileContext, kind: str) -> list[str]:
    """Names built here (from a constructor) as ``kind``."""
    nodes = ((name, ast.parse(name, mode="eval").body) for name in ctx.assignments)
    return [name for name, node in nodes if ctx.constructor(node) and ctx.kind(node) == kind]


@rule("TW131", Level.WARNING, hint="save and restore optimizer.state_dict() (and the scaler's) with the weights")
def partial_resume(ctx: FileContext) -> Iterator[Hit]:
    """A resume that restores the model's weights but not the optimizer or the GradScaler.

    Why: Adam's moments, SGD's momentum and the AMP loss scale are part of the training state;
    a resume without them restarts them from zero, and the continued run is not the run that
    stopped (a loss spike, a scale that climbs back from 65536).
    Fix: put ``optimizer.state_dict()`` (and ``scaler.state_dict()``) in the checkpoint and
    ``load_state_dict`` them where the weights are restored.
    It reports a ``model.load_state_dict`` (or ``load_weights``, or the model's own
    ``net.load(path)``) under a resume branch (``if args.resume:``, ``def resume():``, or an
    ``if`` on an option whose argparse help speaks of it: ``--netG``, "path to netG (to
    continue training)") in a file that builds an optimizer or a GradScaler it never restores.
    Cannot see: state restored in another file or by a library (``accelerator.load_state``);
    a model loaded under another word (``if args.model:``, ``--pretrained``) is taken for
    fine-tuning, where a fresh optimizer is right. A scheduler left behind is reported when a
    resume must lose its place: stepped every batch, or stepped with a counter that is only
    ever set to a constant (``scheduler.step(train_step)``, ``train_step = 0``); an epoch
    scheduler rebuilt from the restored epoch is often right and is not reported.
    """
    restored = {ctx.kind(receiver(c)) for c in ctx.calls if method(c) == "load_state_dict" or method(c) == "load_state"}
    if any(method(c) == "load_state" for c in ctx.calls):
        return  # accelerator.load_state / a library's whole-state restore
    missing = [k for k in ("optimizer", "scaler") if k not in restored and _built(ctx, k)]
    if "scheduler" not in restored and _schedule_restarts(ctx):
        missing.append("scheduler")
    if not missing:
        return
    anchors = [c for c in ctx.calls if in_resume(ctx, c) and _restores_weights(ctx, c)]
    if missing == ["scheduler"]:  # weights and optimizer may both come back: any restore will do
        anchors += [c for c in ctx.calls if in_resume(ctx, c) and method(c) == "load_state_dict"]
    if anchors:
        call = min(anchors, key=position)
        what = " or the ".join(missing)
        yield Hit(call, f"resume restores the weights but not the {what}" + _SCHEDULE_NOTE * ("scheduler" in missing))


_SCHEDULE_NOTE = " (its schedule, stepped per batch or from a counter that starts at 0, begins again)"


def _restores_weights(ctx: FileContext, call: ast.Call) -> bool:
    """``model.load_state_dict(...)`` / ``net.load_weights(...)``, or ``model = torch.load(f)``."""
    if method(call) in _LOADS and ctx.kind(receiver(call)) == "model":
        return True
    statement = ctx.statement(call)
    if (ctx.qualname(call.func) or "") != "torch.load" or not isinstance(statement, ast.Assign):
        return False
    return statement.value is call and any(ctx.kind(t) == "model" for t in statement.targets)


def _schedule_restarts(ctx: FileContext) -> bool:
    """A scheduler built here (without ``last_epoch``) whose place in the schedule a resume
    loses: stepped every batch, or stepped with a counter only ever set to a constant."""
    for call in ctx.calls:
        scheduler = receiver(call)
        if not ctx.is_scheduler_step(call) or ctx.constructor(scheduler) is None:
            continue
        built = next(v for v in reversed(ctx.assignments[dotted(scheduler) or ""]) if isinstance(v, ast.Call))
        if any(k.arg == "last_epoch" for k in getattr(built, "keywords", [])):
            continue
        if call.args:
            values = ctx.assignments.get(dotted(call.args[0]) or "", [])
            if values and all(isinstance(v, ast.Constant) for v in values):
                return True  # scheduler.step(train_step) with train_step = 0 on every start
            continue
        loops = ctx.loops(call)
        if loops and any(ctx.is_optimizer_step(c) and ctx.loops(c)[0] is loops[0] for c in ctx.calls_in(loops[0])):
            return True
    return False
