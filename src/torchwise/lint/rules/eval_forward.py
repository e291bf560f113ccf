"""TW132: a model called on evaluation data with autograd on, followed through the script."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.context import FileContext, position
from torchwise.lint.evidence import reaches, unread
from torchwise.lint.findings import Hit, Level, Unseen
from torchwise.lint.registry import rule
from torchwise.lint.rules.callers import call_sites
from torchwise.lint.rules.eval_evidence import eval_mode_hit, evaluates_in_eval_mode, scores_in_eval_mode
from torchwise.lint.rules.eval_helpers import helper_forwards
from torchwise.lint.rules.eval_repeats import evaluation_mode_given, same_constants, under_named_no_grad
from torchwise.lint.rules.evaluation import evaluation_loops
from torchwise.lint.rules.forward_flow import (
    EVAL_DATA_WORDS,
    backpropagates,
    feeds_backward,
    flows_into,
    from_environment,
    grad_off_before,
)
from torchwise.lint.rules.grad_scope import grad_off_by_callers
from torchwise.lint.rules.modes import last_mode_before


def model_object(ctx: FileContext, func: ast.expr) -> bool:
    """``model(x)`` / ``self.net(x)``: a model held in a variable, not ``evaluate_model(...)``
    (a function of this file), ``LinearClassifier(...)`` (a class) or ``accelerator.unwrap_model``."""
    name = dotted(func)
    if name is None or ctx.kind(func) != "model":
        return False
    parts = name.split(".")
    # A capitalised name is a class (`LinearClassifier(...)`), unless an optimizer built here
    # trains it: pytorch-wgan's `self.G(z)` is the generator.
    capitalised = parts[-1][:1].isupper() and name not in ctx.trained
    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "self") or capitalised:
        return False
    return parts[-1] not in ctx.functions and (parts[0] not in ctx.imports or _rebound(ctx, parts[0]))


def _rebound(ctx: FileContext, name: str) -> bool:
    """``import model`` then ``model = model.RNNModel(...)``: the name holds the built model."""
    return any(isinstance(value, ast.Call) for value in ctx.assignments.get(name, []))


@rule("TW132", Level.WARNING, hint="run the evaluation forward under `with torch.no_grad():`")
def evaluation_forward_with_grad(ctx: FileContext) -> Iterator[Hit]:
    """A model called on evaluation data with autograd on, where no loop over a loader shows it.

    Why: the forward records a graph and keeps every activation for a backward that never
    comes; on a whole test tensor or set that is the memory of a training step for nothing.
    Fix: ``with torch.no_grad():`` (or ``torch.inference_mode()``) around the evaluation.
    It follows the forward's result: a call on ``test_x`` / ``val_data`` (or inside an
    ``evaluate()``-like function that trains nothing) whose output never reaches
    ``backward()``. ``Variable(x, volatile=True)`` does not count as no_grad (it has done
    nothing since torch 0.4), but it says the author wanted autograd off: a forward on such a
    Variable (or on a name last given one) is reported whatever the names around it.
    An evaluation call (``trainer.val(...)``) that the file makes under no_grad in one place
    and with autograd on in another is reported where autograd is on; so is a shared train/evaluate
    function handed an evaluation mode string it compares (robustness's ``_model_loop(args, 'val',
    ...)``) where another call with the same constants runs under a no_grad, also one held in a
    name (``ctx = ch.enable_grad() if disable_no_grad else ch.no_grad()``; ``with ctx:``).
    Where only the function's name says evaluation, its callers in this file decide: one whose
    result reaches ``backward()`` makes it training (PPO's ``ActorCritic.evaluate()`` scores the
    stored actions for the loss). A backward run by a function of this file that the result is
    handed to counts (LoRA's ``train_validate()`` passes its loss to ``optimizer_step()``).
    After ``model.eval()`` with nothing trained after it (whatever the names): a forward in a
    ``for`` loop (powerful-gnns), one whose output is scored on validation data (pygcn's
    ``output[idx_val]``), a call the file also makes under no_grad (fast-autoaugment's run_epoch).
    A function of this file that runs the model and trains nothing, called after ``model.eval()``
    outside no_grad, is reported at that call (real-nvp's ``sample()`` from ``test()``).
    Cannot see: a caller in another file (where only the function's name says evaluation and
    nothing here calls it, it is reported as info); a no_grad set by such a caller; an
    evaluation with neither a volatile input nor evaluation-like data in a function with a
    neutral name (TW104 covers loops over loaders); a volatile Variable that reaches the model
    through another value.
    A name that an import binds and a constructor call rebinds (``import model`` then
    ``model = model.RNNModel(...)``) is taken for the model.
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
    """

    yield from _unguarded_repeats(ctx)
    reported_loops = [loop for loop, no_grad in evaluation_loops(ctx) if not no_grad]
    for call in ctx.calls:
        if not model_object(ctx, call.func) or ctx.under_no_grad(call):
            continue
        if any(loop in ctx.ancestors(call) for loop in reported_loops):
            continue  # TW104 names the loop
        scope = ctx.scope_of(call)
        function = ctx.function(call)
        on_eval_data = any(EVAL_DATA_WORDS.search((dotted(a) or "").rsplit(".", 1)[-1]) for a in call.args)
        eval_name = bool(function and EVAL_DATA_WORDS.search(function.name))
        in_eval_function = function is not None and eval_name and not backpropagates(ctx, function)
        volatile = _volatile_input(ctx, call, scope)
        over_a_set = _inference_over_a_set(ctx, call)
        loops = ctx.loops(call)
        in_eval_mode = evaluates_in_eval_mode(ctx, loops[0], [call]) if loops else scores_in_eval_mode(ctx, call)
        evidence = on_eval_data or in_eval_function or volatile or over_a_set
        if not (evidence or in_eval_mode) or grad_off_before(ctx, scope, call):
            continue
        if feeds_backward(ctx, call, scope):
            continue
        if function is not None and grad_off_by_callers(ctx, function):
            continue
        unseen = trained_where_unread(ctx, call, scope)
        if in_eval_mode and not evidence:
            yield eval_mode_hit(ctx, call, loops[0] if loops else None, function, unseen)
            continue
        sites = call_sites(ctx, function) if function is not None else []
        if in_eval_function and not (on_eval_data or volatile or over_a_set):
            if from_environment(ctx, call, scope):
                what = f"{ast.unparse(call.func)}(...) acts on one observation of its environment at a time"
                yield Hit(call, f"{what} with autograd on (each step's graph is dropped at the next)", level=Level.INFO)
                continue
            # Only the function's name says evaluation: its callers decide.
            if any(feeds_backward(ctx, site, ctx.scope_of(site)) for site in sites):
                continue  # PPO's evaluate(): its log-probs are the loss that update() backpropagates
            if not sites:
                what = f"{ast.unparse(call.func)}(...) evaluates with autograd on"
                outside = Unseen("a caller outside this file", "turns it off")  # nothing here calls it
                yield Hit(call, what, unseen=(outside, *unseen))
                continue
        if volatile:
            what = f"{ast.unparse(call.func)}(...) runs on Variable(volatile=True)"
            yield Hit(call, f"{what}, which does nothing since torch 0.4: autograd is on here", unseen=unseen)
        elif over_a_set and not (on_eval_data or in_eval_function):
            where = ast.unparse(ctx.loops(call)[0].iter)  # type: ignore[attr-defined]
            what = f"{ast.unparse(call.func)}(...) runs with autograd on for every item of {where}"
            yield Hit(call, f"{what}, in a script that never trains: no torch.no_grad() here", unseen=unseen)
        else:
            what = f"{ast.unparse(call.func)}(...) evaluates with autograd on: no torch.no_grad() here"
            yield Hit(call, what, unseen=unseen)
    yield from helper_forwards(ctx, model_object)
    yield from _periodic_samples(ctx)  # last: a statement's warning above outranks its info


def trained_where_unread(ctx: FileContext, call: ast.Call, scope: ast.AST) -> tuple[Unseen, ...]:
    """The forward's result handed to code lint cannot read that can reach an optimizer (a
    method or the ``__call__`` of an object built with one, or a call given one): it could run
    the backward and the step there (openai-transformer-lm's ``compute_loss_fct(...)``, a
    ``MultipleChoiceLossCompute`` of ``loss.py`` built with ``model_opt``)."""

    def trains(c: ast.Call) -> bool:
        return unread(ctx, c) is not None and reaches(ctx, c, "optimizer")

    sink = flows_into(ctx, call, scope, trains)
    if sink is None:
        return ()
    return (Unseen(f"{unread(ctx, sink)}(...), handed its result and the optimizer,", "trains on it"),)


def _unguarded_repeats(ctx: FileContext) -> Iterator[Hit]:
    """``trainer.val(0, val_loader)`` with autograd on, where this file makes the same evaluation
    call under ``torch.no_grad()`` elsewhere (CenterNet's main.py: the epoch loop wraps it, the
    ``--test`` path does not): the file itself says the call needs no_grad."""
    # A call guarded only through a name (``with ctx:``), or an evaluation only by its mode string,
    # counts for the calls that repeat its constants (not an adversarial ``adv=True`` evaluation).
    guarded: dict[str, list[tuple[ast.Call, bool]]] = {}
    for call in ctx.calls:
        name = dotted(call.func)
        if name and _evaluation_site(ctx, call) and (ctx.under_no_grad(call) or under_named_no_grad(ctx, call)):
            guarded.setdefault(name, []).append((call, ctx.under_no_grad(call)))
    for call in ctx.calls:
        if ctx.under_no_grad(call) or under_named_no_grad(ctx, call) or not _evaluation_site(ctx, call):
            continue
        by_name = _evaluation_call(ctx, call)
        plain = _evaluation_site(ctx, call, by_mode=False)
        others = [
            o for o, syntactic in guarded.get(dotted(call.func) or "", [])
            if by_name or (plain and syntactic) or same_constants(o, call)
        ]
        other = others[0] if others else None
        if other is None:
            continue
        if feeds_backward(ctx, call, ctx.scope_of(call)) or grad_off_before(ctx, ctx.scope_of(call), call):
            continue
        function = ctx.function(call)
        if function is not None and grad_off_by_callers(ctx, function):
            continue
        what = ast.unparse(call.func)
        yield Hit(call, f"{what}(...) runs with autograd on; line {other.lineno} runs it under torch.no_grad()")


def _evaluation_site(ctx: FileContext, call: ast.Call, by_mode: bool = True) -> bool:
    """An evaluation call by its name, or one made right after ``model.eval()`` in its scope that
    runs a model (fast-autoaugment's ``--only-eval`` pass: ``model.eval()`` then
    ``run_epoch(model, trainloader, criterion, None, ...)``, the function its training calls too)."""
    if _evaluation_call(ctx, call) or (by_mode and evaluation_mode_given(ctx, call)):
        return True
    if last_mode_before(ctx, ctx.scope_of(call), call) != "eval":
        return False
    callee = ctx.callee(call)
    if callee is None:
        return False
    return any(model_object(ctx, c.func) and not ctx.under_no_grad(c) for c in ctx.reached_calls(callee))


def _evaluation_call(ctx: FileContext, call: ast.Call) -> bool:
    """``trainer.val(...)``, ``evaluate(...)``: named for evaluation, not ``model.eval()`` (a mode
    switch) nor a local ``train_val_loop(...)`` that trains (its backward decides)."""
    name = (dotted(call.func) or "").rsplit(".", 1)[-1]
    if not EVAL_DATA_WORDS.search(name) or name == "eval":
        return False
    callee = ctx.callee(call)
    if callee is not None:
        return not ctx.has_backward(callee)
    return _hands_over_a_runner(ctx, call)


def _hands_over_a_runner(ctx: FileContext, call: ast.Call) -> bool:
    """A call of another file that is given something able to run a forward: an object whose
    method it is (``trainer.val(...)``), a model, or data (``val_loader``). A plain function
    given only tensors (``eval_metrics(output, target, num_classes)``, pytorch-segmentation's
    trainer) scores outputs a forward already made: it runs no model itself."""
    owner = receiver(call)
    if owner is not None and (dotted(owner) or "").split(".")[0] not in ctx.imports:
        return True  # a method of an object (a trainer holds its model)
    values = [*call.args, *(k.value for k in call.keywords)]
    return any(ctx.kind(v) in {"model", "loader"} or ctx.data_names(v) for v in values)


def _volatile_input(ctx: FileContext, call: ast.Call, scope: ast.AST) -> bool:
    """An argument that is ``Variable(x, volatile=True)`` (through ``.cuda()`` and the like),
    directly or as the last value its name was given before the call in the same scope
    (``data, target = Variable(data, volatile=True), Variable(target)``): its author meant the
    forward to run without autograd, and since torch 0.4 it does not."""
    for arg in call.args:
        if _is_volatile(arg):
            return True
        name = dotted(arg)
        if name is None:
            continue
        given = [
            (position(node), value)
            for node in ctx.walk(scope)
            if isinstance(node, ast.Assign) and position(node) < position(call)
            for target in node.targets
            if (value := _value_given(target, node.value, name)) is not None
        ]
        if given and _is_volatile(max(given, key=lambda pair: pair[0])[1]):
            return True
    return False


def _value_given(target: ast.expr, value: ast.expr, name: str) -> ast.expr | None:
    """The part of ``value`` that ``target = value`` gives to ``name`` (tuples unpacked)."""
    if dotted(target) == name:
        return value
    if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List):
        if len(target.elts) == len(value.elts):
            for part, given in zip(target.elts, value.elts, strict=True):
                if (found := _value_given(part, given, name)) is not None:
                    return found
    return None


def _is_volatile(node: ast.expr) -> bool:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not _is_variable(node):
        node = node.func.value  # Variable(x, volatile=True).cuda().unsqueeze(0)
    return _is_variable(node) and any(
        k.arg == "volatile" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in node.keywords  # type: ignore[union-attr]
    )


def _is_variable(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and (dotted(node.func) or "").rsplit(".", 1)[-1] == "Variable"


def _never_trains(ctx: FileContext) -> bool:
    """No ``backward()``, no ``step()`` or ``zero_grad()``, no ``torch.optim`` and no gradient asked
    for (``torch.autograd.grad``, ``requires_grad_``) in the file: an evaluation or inference
    script (pytorch-vdsr's eval.py), not an attack or a saliency map that needs the graph. An
    optimizer built here and handed to code of another file trains there (openai-transformer-lm's
    ``MultipleChoiceLossCompute(..., model_opt)`` runs the backward and the step)."""

    def compute() -> bool:
        return not any(
            ctx.is_backward(c)
            or method(c) in {"step", "zero_grad", "backward", "requires_grad_"}
            or any(word in (ctx.qualname(c.func) or "") for word in ("optim", "autograd.grad"))
            or _hands_an_optimizer_on(ctx, c)
            for c in ctx.calls
        )

    return ctx.memo("never_trains", compute)


def _hands_an_optimizer_on(ctx: FileContext, call: ast.Call) -> bool:
    """A call of an imported name (a class or function of another file) given an optimizer that
    this file builds: whatever that code does with it, it is there to step."""
    if (dotted(call.func) or "").split(".")[0] not in ctx.imports:
        return False
    given = [*call.args, *(k.value for k in call.keywords)]
    return any(ctx.kind(v) == "optimizer" and ctx.constructor(v) is not None for v in given)


_COUNTERS = frozenset({"range", "count", "itertools.count"})


def _inference_over_a_set(ctx: FileContext, call: ast.Call) -> bool:
    """A forward in a ``for`` loop over a collection (test images, files, a dataset), in a
    script that never trains and outside a module's own methods: every item's graph is built
    for nothing. A loop over ``range(n)`` (sampling a sequence step by step) and a single
    forward are left alone."""
    loops = ctx.loops(call)
    if not loops or not isinstance(loops[0], ast.For) or not _never_trains(ctx):
        return False
    walked = loops[0].iter
    while isinstance(walked, ast.Call) and dotted(walked.func) in {"enumerate", "tqdm", "tqdm.tqdm"} and walked.args:
        walked = walked.args[0]
    if isinstance(walked, ast.Call) and (dotted(walked.func) or "") in _COUNTERS:
        return False
    if isinstance(walked, ast.List | ast.Tuple | ast.Set) or not call.args:
        return False  # `for batch_size in [1, 8, 32]`, `for model_cls in (A, B): model_cls()`: settings
    function = ctx.function(call)
    owner = ctx.parents.get(function) if function is not None else None
    return not (function is not None and function.name == "forward") and not _module_class(owner)


def _module_class(node: ast.AST | None) -> bool:
    """A class built on a torch module (``nn.Module``, ``nn.ModuleDict``, ``nn.Sequential``): its
    methods run inside the model (timm's ``DenseBlock(nn.ModuleDict)`` walks its layers)."""
    if not isinstance(node, ast.ClassDef):
        return False
    bases = [dotted(b) or "" for b in node.bases]
    return any(re.search(r"Module|Sequential|^nn\.", b) for b in bases)


def _periodic_samples(ctx: FileContext) -> Iterator[Hit]:
    """A forward under ``if step % k == 0:`` inside the training loop whose result never reaches
    ``backward()`` (glow-tts draws a sample with ``generator.module(x[:1], gen=True)`` every
    ``log_interval`` batches): a graph built for nothing every k steps. Info: one small batch
    now and then costs little, and whether it is worth a no_grad is the author's call."""
    for call in ctx.calls:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "module":
            func = func.value  # DDP's generator.module(...) runs the wrapped model
        loops = ctx.loops(call)
        if not loops or not model_object(ctx, func) or ctx.under_no_grad(call):
            continue
        if ctx.modulo_guard(call, loops[0]) is None or not ctx.has_backward(loops[0]):
            continue
        scope = ctx.scope_of(call)
        if feeds_backward(ctx, call, scope) or grad_off_before(ctx, scope, call):
            continue
        what = f"{ast.unparse(call.func)}(...) runs every few steps with autograd on"
        yield Hit(call, f"{what}, and its result never reaches backward()", level=Level.INFO)
