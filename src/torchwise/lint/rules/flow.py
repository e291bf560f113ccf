"""Rules that follow values through a script: what a name was built from, where it goes next.

>>> from torchwise.lint.engine import lint_source
>>> src = "import torch\\nloss = criterion(out, y)\\nprint(loss.data[0])\\n"
>>> [f.code for f in lint_source(src)]
['TW129']
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.context import FileContext, dotted, method, position, receiver
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule

_LOSS_WORDS = re.compile(r"loss|criterion|cost", re.I)
_VERSION_WORDS = re.compile(r"version", re.I)


def _version_guarded(ctx: FileContext, node: ast.AST) -> bool:
    """Inside an ``if`` that tests the torch version: the legacy branch of code that runs on both."""
    return any(
        isinstance(a, ast.If) and _VERSION_WORDS.search(ast.unparse(a.test)) for a in ctx.ancestors(node)
    )


def _is_loss(ctx: FileContext, node: ast.expr) -> bool:
    """A value that is a scalar loss: named like one, built by a loss call, or a reduction."""
    text = ast.unparse(node)
    if _LOSS_WORDS.search(text):
        return True
    name = dotted(node)
    for value in ctx.assignments.get(name or "", []):
        if isinstance(value, ast.Call) and (
            _LOSS_WORDS.search(dotted(value.func) or "") or method(value) in {"mean", "sum"}
        ):
            return True
    return False


@rule("TW129", Level.ERROR, hint="use loss.item() (a 0-dim tensor has no index 0)")
def zero_dim_data_index(ctx: FileContext) -> Iterator[Hit]:
    """``loss.data[0]`` on a loss: a 0-dim tensor since torch 0.4, so the index raises.

    Why: losses and reductions (``criterion(...)``, ``.mean()``, ``.sum()``) are 0-dim
    tensors; ``t.data[0]`` raises ``IndexError: invalid index of a 0-dim tensor``. Code
    written for torch 0.3 still carries it.
    Fix: ``loss.item()`` for the Python number (``loss.detach()`` for a tensor).
    It knows a loss by its name (loss, criterion, cost) or by the call that built it (a loss
    function, ``.mean()``, ``.sum()``); a branch under an ``if`` on the torch version is left
    alone (the old path of code that supports both).
    Cannot see: a 0-dim value with another name built elsewhere (``t.data[0]`` for an element
    of a 1-D tensor is not reported), nor a file Python cannot parse: torch 0.3 scripts often
    also call ``.cuda(async=True)``, a syntax error since Python 3.7, and lint then reports only
    that.
    """
    for node in ctx.nodes:
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)):
            continue
        if node.value.attr != "data" or not (isinstance(node.slice, ast.Constant) and node.slice.value == 0):
            continue
        if _is_loss(ctx, node.value.value) and not _version_guarded(ctx, node):
            yield Hit(node, f"{ast.unparse(node)}: a loss is 0-dim, so index 0 raises IndexError")


def _catches_stop_iteration(ctx: FileContext, node: ast.AST) -> bool:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.Try):
            for handler in ancestor.handlers:
                caught = ast.unparse(handler.type) if handler.type is not None else "BaseException"
                if re.search(r"StopIteration|Exception", caught):
                    return True
    return False


def _is_loader(ctx: FileContext, node: ast.expr) -> bool:
    return ctx.kind(node) == "loader" or bool(ctx.data_names(node))


@rule("TW130", Level.WARNING, hint="catch StopIteration and call iter(loader) again (or loop over the loader)")
def exhausted_iterator(ctx: FileContext) -> Iterator[Hit]:
    """``next(it)`` in a step loop over an ``iter(loader)`` made once and never made again.

    Why: a loader's iterator ends after one epoch; the next ``next()`` raises
    ``StopIteration`` (or, in a generator, ends it silently), so a loop counting iterations
    past one epoch stops there.
    Fix: re-create the iterator when it runs out (``except StopIteration: it = iter(loader)``),
    loop ``for batch in loader`` per epoch, or wrap the loader in an endless generator.
    Cannot see: an iterator over something that is not a loader by its constructor or name,
    or one re-created in another function; ``next(iter(loader))`` (one batch) is fine.
    """
    made: dict[str, list[ast.AST]] = {}
    for name, values in ctx.assignments.items():
        for value in values:
            if (
                isinstance(value, ast.Call)
                and dotted(value.func) == "iter"
                and value.args
                and _is_loader(ctx, value.args[0])
            ):
                made.setdefault(name, []).append(value)
    for call in ctx.calls:
        if dotted(call.func) != "next" or len(call.args) != 1:  # next(it, None) does not raise
            continue
        name = dotted(call.args[0])
        if name not in made or len(made[name]) > 1 or _catches_stop_iteration(ctx, call):
            continue
        loops = ctx.loops(call)
        if not loops:
            continue
        outer = loops[-1]
        if any(outer in ctx.loops(m) or m is outer for m in made[name]):
            continue  # made again in the loop (each epoch)
        if isinstance(outer, ast.For) and _is_loader(ctx, outer.iter):
            continue  # paired with a loop over data: the counts match
        yield Hit(call, f"next({name}) runs past the end of iter(...) made once: StopIteration after one epoch")


_RESUME_WORDS = re.compile(r"resume|restart|continue|checkpoint", re.I)
_LOADS = frozenset({"load_state_dict", "load_weights"})


def _in_resume(ctx: FileContext, node: ast.AST) -> bool:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.If) and _RESUME_WORDS.search(ast.unparse(ancestor.test)):
            return True
        if isinstance(ancestor, ast.FunctionDef | ast.AsyncFunctionDef) and _RESUME_WORDS.search(ancestor.name):
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
    It reports a ``model.load_state_dict`` (or ``load_weights``) under a resume branch
    (``if args.resume:``, ``def resume():``) in a file that builds an optimizer or a
    GradScaler it never restores.
    Cannot see: state restored in another file or by a library (``accelerator.load_state``);
    a model loaded under another word (``if args.model:``, ``--pretrained``) is taken for
    fine-tuning, where a fresh optimizer is right. A scheduler left behind is reported when a
    resume must lose its place: stepped every batch, or stepped with a counter that is only
    ever set to a constant (``scheduler.step(train_step)``, ``train_step = 0``); an epoch
    scheduler rebuilt from the restored epoch is often right and is not reported.
    """
    restored = {
        ctx.kind(receiver(c))
        for c in ctx.calls
        if method(c) == "load_state_dict" or method(c) == "load_state"
    }
    if any(method(c) == "load_state" for c in ctx.calls):
        return  # accelerator.load_state / a library's whole-state restore
    missing = [k for k in ("optimizer", "scaler") if k not in restored and _built(ctx, k)]
    if "scheduler" not in restored and _schedule_restarts(ctx):
        missing.append("scheduler")
    if not missing:
        return
    anchors = [c for c in ctx.calls if _in_resume(ctx, c) and _restores_weights(ctx, c)]
    if missing == ["scheduler"]:  # weights and optimizer may both come back: any restore will do
        anchors += [c for c in ctx.calls if _in_resume(ctx, c) and method(c) == "load_state_dict"]
    if anchors:
        call = min(anchors, key=position)
        what = " or the ".join(missing)
        yield Hit(call, f"resume restores the weights but not the {what}" + _SCHEDULE_NOTE * ("scheduler" in missing))


_SCHEDULE_NOTE = " (its schedule, stepped per batch or from a counter that starts at 0, begins again)"


def _restores_weights(ctx: FileContext, call: ast.Call) -> bool:
    """``model.load_state_dict(...)`` / ``net.load_weights(...)``, or ``model = torch.load(f)``."""
    if method(call) in _LOADS:
        return ctx.kind(receiver(call)) == "model"
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


# test_x, val_loader, evaluate, validate_epoch; not value, interval, latest or get_value.
_EVAL_DATA_WORDS = re.compile(
    r"(^|_)(val|valid|validate|validation|test|eval|evaluate|evaluation|holdout)(_|$|\d)", re.I
)


def _model_object(ctx: FileContext, func: ast.expr) -> bool:
    """``model(x)`` / ``self.net(x)``: a model held in a variable, not ``evaluate_model(...)``
    (a function of this file), ``LinearClassifier(...)`` (a class) or ``accelerator.unwrap_model``."""
    name = dotted(func)
    if name is None or ctx.kind(func) != "model":
        return False
    parts = name.split(".")
    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "self") or parts[-1][:1].isupper():
        return False
    return parts[-1] not in ctx.functions and (parts[0] not in ctx.imports or _rebound(ctx, parts[0]))


def _rebound(ctx: FileContext, name: str) -> bool:
    """``import model`` then ``model = model.RNNModel(...)``: the name holds the built model."""
    return any(isinstance(value, ast.Call) for value in ctx.assignments.get(name, []))


def _targets(node: ast.Assign | ast.AugAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {d for t in targets for n in ast.walk(t) if (d := dotted(n))}


def _feeds_backward(ctx: FileContext, call: ast.Call, scope: ast.AST) -> bool:
    """Whether ``call``'s result reaches a ``backward()`` later in ``scope``: names are
    followed through assignments in source order, and a name assigned anew from something
    else stops carrying it (``pred`` of the test pass is not the ``pred`` trained on later)."""
    statement = ctx.statement(call)
    if statement is None:
        return False
    if any(ctx.is_backward(c) for c in ctx.calls_in(statement)):
        return True
    tainted = _targets(statement) if isinstance(statement, ast.Assign) else set()
    later = sorted(
        (n for n in ctx.walk(scope) if position(n) > position(statement)
         and (isinstance(n, ast.Assign | ast.AugAssign) or (isinstance(n, ast.Call) and _uses_grad(ctx, n)))),
        key=position,
    )
    for node in later:
        used = {dotted(n) for n in ast.walk(node if isinstance(node, ast.Call) else node.value)}
        if isinstance(node, ast.Call):
            if used & tainted:
                return True
        elif used & tainted:
            tainted |= _targets(node)
        elif isinstance(node, ast.Assign):
            tainted -= _targets(node)
    return False


def _uses_grad(ctx: FileContext, call: ast.Call) -> bool:
    return ctx.is_backward(call) or method(call) == "requires_grad_" or "autograd.grad" in (dotted(call.func) or "")


def _grad_off_before(ctx: FileContext, scope: ast.AST, node: ast.AST) -> bool:
    return any(
        ctx.is_no_grad(c) and position(c) < position(node) and isinstance(ctx.parents.get(c), ast.Expr)
        for c in ctx.calls_in(scope)
    )


@rule("TW132", Level.WARNING, hint="run the evaluation forward under `with torch.no_grad():`")
def evaluation_forward_with_grad(ctx: FileContext) -> Iterator[Hit]:
    """A model called on evaluation data with autograd on, where no loop over a loader shows it.

    Why: the forward records a graph and keeps every activation for a backward that never
    comes; on a whole test tensor or set that is the memory of a training step for nothing.
    Fix: ``with torch.no_grad():`` (or ``torch.inference_mode()``) around the evaluation.
    It follows the forward's result: a call on ``test_x`` / ``val_data`` (or inside an
    ``evaluate()``-like function that trains nothing) whose output never reaches
    ``backward()``. ``Variable(x, volatile=True)`` does not count as no_grad (it has done
    nothing since torch 0.4).
    Cannot see: a no_grad set by a caller in another file; an evaluation whose data has no
    evaluation-like name in a function with a neutral name (TW104 covers loops over loaders).
    A name that an import binds and a constructor call rebinds (``import model`` then
    ``model = model.RNNModel(...)``) is taken for the model.
    """
    from torchwise.lint.rules.evaluation import evaluation_loops

    reported_loops = [loop for loop, no_grad in evaluation_loops(ctx) if not no_grad]
    for call in ctx.calls:
        if not _model_object(ctx, call.func) or ctx.under_no_grad(call):
            continue
        if any(loop in ctx.ancestors(call) for loop in reported_loops):
            continue  # TW104 names the loop
        scope = ctx.scope_of(call)
        function = ctx.function(call)
        on_eval_data = any(
            _EVAL_DATA_WORDS.search((dotted(a) or "").rsplit(".", 1)[-1]) for a in call.args
        )
        in_eval_function = bool(
            function and _EVAL_DATA_WORDS.search(function.name) and not ctx.has_backward(function)
        )
        if not (on_eval_data or in_eval_function) or _grad_off_before(ctx, scope, call):
            continue
        if _feeds_backward(ctx, call, scope):
            continue
        if function is not None and _called_only_under_no_grad(ctx, function):
            continue
        yield Hit(call, f"{ast.unparse(call.func)}(...) evaluates with autograd on: no torch.no_grad() here")


def _called_only_under_no_grad(ctx: FileContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    sites = [c for c in ctx.calls if ctx.callee(c) is function]
    return bool(sites) and all(ctx.under_no_grad(s) for s in sites)

