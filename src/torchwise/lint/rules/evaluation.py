"""Rules about evaluation: eval() mode, no_grad, switching back to train()."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword, method
from torchwise.lint.context import FileContext, Loop, position
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.evidence import caller_outside, handed_to_unread
from torchwise.lint.findings import Hit, Level, Unseen
from torchwise.lint.kinds import classify
from torchwise.lint.registry import rule
from torchwise.lint.rules.grad_scope import grad_off_by_callers, switched_off_before
from torchwise.lint.rules.modes import direct_mode, last_mode_before, mode_free, mode_hit, mode_of_call, mode_switches

# val_loader, testloader, validate, evaluate, dev_set; not interval, latest or device.
_EVAL_WORDS = re.compile(r"(^|_)(val|valid|test|eval|holdout)|(^|_)dev(_|$)", re.I)


def _helper_calls(ctx: FileContext, call: ast.Call) -> list[ast.Call]:
    target = ctx.callee(call)
    return ctx.reached_calls(target, 1) if target is not None else []


def _deliberately_in_train_mode(ctx: FileContext, scope: ast.AST, loop: ast.AST) -> bool:
    """``model.train()`` right before a no-grad pass with no training in between: on purpose
    (recomputing batch-norm statistics, Monte-Carlo dropout)."""
    switches = mode_switches(ctx, scope, loop)
    if not switches or switches[-1][0] != "train":
        return False
    switched = position(switches[-1][1])
    between = (c for c in ctx.calls_in(scope) if switched < position(c) < position(loop))
    return not any(ctx.is_backward(c) or ctx.is_optimizer_step(c) for c in between)


def _grad_disabled(ctx: FileContext, loop: ast.AST) -> bool:
    if ctx.under_no_grad(loop):
        return True
    function = ctx.function(loop)
    if function is not None and grad_off_by_callers(ctx, function):
        return True  # every caller here runs it under no_grad (a decorator or a `with` of theirs)
    inside = any(
        isinstance(n, ast.With) and any(ctx.is_no_grad(i.context_expr) for i in n.items) for n in ctx.walk(loop)
    )
    return inside or switched_off_before(ctx, ctx.scope_of(loop), loop)


_NOT_MODELS = frozenset({"optimizer", "scheduler", "scaler", "state"})
_Comprehension = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


def _data_loops(ctx: FileContext) -> Iterator[tuple[ast.AST, ast.expr]]:
    """``for`` loops and comprehensions with the iterable each one walks."""
    for node in ctx.nodes:
        if isinstance(node, ast.For | ast.AsyncFor):
            yield node, node.iter
        elif isinstance(node, _Comprehension):
            yield node, node.generators[0].iter


def uses_gradients(ctx: FileContext, call: ast.Call) -> bool:
    """Training, or gradients on purpose (saliency maps, adversarial examples)."""
    if ctx.is_backward(call) or ctx.is_optimizer_step(call):
        return True
    return method(call) == "requires_grad_" or (ctx.qualname(call.func) or "").endswith("autograd.grad")


def evaluation_loops(ctx: FileContext) -> list[tuple[ast.AST, bool]]:
    """Loops over data that run the model without training it, with their no_grad status."""
    return ctx.memo("evaluation_loops", lambda: list(_find_evaluation_loops(ctx)))


def _pulled_loaders(ctx: FileContext, loop: ast.AST) -> list[str]:
    """Loaders a loop pulls batches from with ``next(it)``, ``it = iter(loader)``: jwyang's
    faster-rcnn test_net.py walks ``for i in range(num_images): data = next(data_iter)``."""
    pulled = []
    for call in ctx.calls_in(loop):
        if dotted(call.func) != "next" or not call.args:
            continue
        for made in ctx.assignments.get(dotted(call.args[0]) or "", []):
            if isinstance(made, ast.Call) and dotted(made.func) == "iter" and made.args:
                source = made.args[0]
                if ctx.kind(source) == "loader" or ctx.data_names(source):
                    pulled.append(dotted(source) or "loader")
    return pulled


def _switched_models(ctx: FileContext) -> set[str]:
    """Names switched with ``x.eval()`` / ``x.train()``: modules, whatever they are called
    (faster-rcnn's ``fasterRCNN = vgg16(...)``)."""

    def collect() -> set[str]:
        return {dotted(receiver_of(c)) or "" for c in ctx.calls if direct_mode(ctx, c)} - {""}

    return ctx.memo("switched_models", collect)


def _find_evaluation_loops(ctx: FileContext) -> Iterator[tuple[ast.AST, bool]]:
    for loop, iterable in _data_loops(ctx):
        names = ctx.data_names(iterable) or _named_through(ctx, loop, iterable)
        if not names and isinstance(loop, ast.For):
            names = _pulled_loaders(ctx, loop)
        if not names:
            continue
        reached = ctx.reached_calls(loop)
        if any(uses_gradients(ctx, c) for c in reached):
            continue
        switched = _switched_models(ctx)
        if not any(
            ctx.kind(c.func) == "model" or dotted(c.func) in switched or _model_method_on_batch(ctx, c, loop)
            for c in ctx.calls_in(loop)
        ) and not _runs_model_through_helper(ctx, loop):
            continue
        no_grad = _grad_disabled(ctx, loop)
        function = ctx.function(loop)
        named_eval = any(_EVAL_WORDS.search(n) for n in names) or bool(function and _EVAL_WORDS.search(function.name))
        if no_grad or named_eval or last_mode_before(ctx, ctx.scope_of(loop), loop) == "eval":
            yield loop, no_grad


def _runs_model_through_helper(ctx: FileContext, loop: ast.AST) -> bool:
    """The loop hands each batch to a function of this file that calls the model with autograd on
    (Informer's ``self._process_one_batch(vali_data, batch_x, ...)`` runs ``self.model(...)``; a
    helper that runs it under no_grad, as semseg's ``net_process``, or switches autograd with
    ``torch.set_grad_enabled(train)``, is no evaluation with graphs)."""
    return any(
        ctx.kind(inner.func) == "model" and ctx.callee(inner) is None and not ctx.under_no_grad(inner)
        for call in ctx.calls_in(loop)
        if (target := ctx.callee(call)) is not None and not _switches_grad(ctx, target)
        for inner in ctx.calls_in(target)
    )


def _named_through(ctx: FileContext, loop: ast.AST, iterable: ast.expr) -> list[str]:
    """The data names of the value a plain name was last given before the loop, in the loop's
    function: RAdam's ``iterator = data_loader.get_tqdm()``, ``pbar = tqdm(val_loader)``."""
    if not isinstance(iterable, ast.Name):
        return []
    given = [
        n.value
        for n in ctx.walk(ctx.scope_of(loop))
        if isinstance(n, ast.Assign)
        and position(n) < position(loop)
        and any(dotted(t) == iterable.id for t in n.targets)
    ]
    return ctx.data_names(max(given, key=position)) if given else []


# Methods of a module that do not run it on data.
_NOT_FORWARDS = frozenset(
    "eval train parameters named_parameters state_dict load_state_dict zero_grad to cuda cpu half float "
    "double modules children named_modules apply requires_grad_ init_hidden reset register_buffer".split()
)


def _model_method_on_batch(ctx: FileContext, call: ast.Call, loop: ast.AST) -> bool:
    """``lm_model.log_prob(word_t)``: a method of a model run on what the loop yields.

    Only of an object this file shows to be a module (switched with ``eval()``/``train()``,
    built from a module class, trained by an optimizer built here): a name alone does not say
    the method runs layers with autograd on. DrQA's ``model.predict(ex)`` is a method of a
    wrapper class of another file (``DocReader``) that runs its network under no_grad itself."""
    model = receiver_of(call)
    if model is None or method(call) in _NOT_FORWARDS:
        return False
    named = method(call) == "forward" and ctx.kind(model) == "model"  # the forward itself, visible here
    if not (named or _shown_to_be_a_module(ctx, model)):
        return False
    targets = getattr(loop, "target", None) or getattr(getattr(loop, "generators", [None])[0], "target", None)
    yielded = {n.id for n in ast.walk(targets) if isinstance(n, ast.Name)} if targets is not None else set()
    return any(isinstance(n, ast.Name) and n.id in yielded for a in call.args for n in ast.walk(a))


def _shown_to_be_a_module(ctx: FileContext, node: ast.expr) -> bool:
    """Evidence beyond the name that ``node`` is an nn.Module: ``node.eval()``/``node.train()``
    in this file, a constructor that builds one, or its parameters in an optimizer built here."""
    name = dotted(node)
    if name in _switched_models(ctx) or name in ctx.trained:
        return True
    built_from = ctx.constructor(node)
    return bool(built_from) and classify(built_from=built_from, name="", module_classes=ctx.module_classes) == "model"


def _switched_by_unread(ctx: FileContext, scope: ast.AST, loop: ast.AST, models: list[ast.expr]) -> tuple[Unseen, ...]:
    """Calls before the loop (after the last ``train()``) of code lint cannot read that are handed
    the model: each could switch it to eval mode (``utils.prepare_eval(model)``)."""
    switches = mode_switches(ctx, scope, loop)
    since = position(switches[-1][1]) if switches else (0, 0)
    before = [c for c in ctx.calls_in(scope) if since < position(c) < position(loop)]
    return tuple(u for m in models for u in handed_to_unread(ctx, before, dotted(m), "switches it to eval()"))


def _eval_at_call_sites(ctx: FileContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    sites = [c for c in ctx.calls if ctx.callee(c) is function]
    return bool(sites) and all(last_mode_before(ctx, ctx.scope_of(site), site) == "eval" for site in sites)


@rule("TW103", Level.WARNING, hint="call model.eval() before the evaluation loop")
def evaluation_without_eval_mode(ctx: FileContext) -> Iterator[Hit]:
    """An evaluation loop with no ``model.eval()`` before it.

    Why: in train mode dropout keeps dropping units and batch norm normalises with the
    batch's statistics (and updates its running ones), so validation numbers are noisy,
    wrong, and change the model.
    Fix: ``model.eval()`` before the loop, ``model.train()`` before training resumes.
    It also reports ``run_epoch(loader, train=False)`` of one function that trains under
    ``if train:`` and evaluates otherwise without ever switching mode.
    It warns only where this file (or a module beside it) shows the model has dropout or batch
    norm (a layer of them, a ``self.training`` test, a torchvision/timm/transformers network).
    A model built from layers without dropout or batch norm, or from ``from_pretrained``
    (returned in eval mode), is not reported; nor is a batch norm built with ``momentum=1`` or
    ``track_running_stats=False``, which keeps no running statistics worth switching to.
    Cannot see: layers defined where it cannot read them (a package, a file not beside this
    one): reported as info, since ``eval()`` may change nothing there; an ``eval()`` made by a
    helper in another file, or a loop it does not recognise as evaluation (no data-like name).
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
    """
    for loop, _ in evaluation_loops(ctx):
        scope = ctx.scope_of(loop)
        if last_mode_before(ctx, scope, loop) == "eval":
            continue
        if _deliberately_in_train_mode(ctx, scope, loop):
            continue
        function = ctx.function(loop)
        if function is not None and _eval_at_call_sites(ctx, function):
            continue
        models = [c.func for c in ctx.calls_in(loop) if ctx.kind(c.func) == "model"]
        if all(mode_free(ctx, m) or _pretrained_in_eval_mode(ctx, m) for m in models):
            continue  # no dropout or batch norm, or already in eval mode: eval() changes nothing
        unseen = (
            *caller_outside(ctx, function, "calls eval() first"),
            *_switched_by_unread(ctx, scope, loop, models),
        )
        yield mode_hit(ctx, loop, models, "evaluation loop runs the model without model.eval() before it", unseen)
    for site, function in _shared_epoch_evaluations(ctx):
        models = [c.func for c in ctx.calls_in(function) if ctx.kind(c.func) == "model"]
        message = (
            f"{function.name}(...) evaluates here in the mode training left the model in: "
            "nothing calls model.eval() on this path"
        )
        yield mode_hit(ctx, site, models, message)


_TRAIN_FLAGS = re.compile(r"^(is_)?train(ing)?$|^do_train$", re.I)


def _flag_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, int] | None:
    """``train`` in ``def _run_epoch(self, loader, train=True)``: (name, positional index)."""
    for index, arg in enumerate(function.args.args):
        if _TRAIN_FLAGS.match(arg.arg):
            return arg.arg, index
    return None


def _passes_false(call: ast.Call, flag: str, index: int, method_call: bool) -> bool:
    value = keyword(call, flag)
    if value is None:
        index -= 1 if method_call else 0  # `self` is not written at a method call
        value = call.args[index] if 0 <= index < len(call.args) else None
    return is_constant(value, False)


def _shared_epoch_evaluations(
    ctx: FileContext,
) -> Iterator[tuple[ast.Call, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Calls ``run_epoch(loader, train=False)`` of one function that trains under ``if train:``
    and evaluates otherwise, where neither it nor its caller switches to eval mode."""
    for site, function in _untrained_runs(ctx):
        if any(mode_of_call(ctx, c) for c in ctx.reached_calls(function)):
            continue  # it sets the mode itself (model.train(train), or eval() in its else)
        if last_mode_before(ctx, ctx.scope_of(site), site) != "eval":
            yield site, function


def _untrained_runs(
    ctx: FileContext,
) -> Iterator[tuple[ast.Call, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Calls ``run_epoch(loader, train=False)`` of one function that trains under ``if train:``
    (a flag parameter it tests or hands on) and so evaluates when the flag is off."""
    for function in ctx.functions.values():
        found = _flag_parameter(function)
        if found is None or not any(ctx.is_backward(c) for c in ctx.reached_calls(function)):
            continue
        flag, index = found
        if not any(
            flag in {dotted(n) for n in ast.walk(i.test)} for i in ctx.walk(function) if isinstance(i, ast.If)
        ) and not any(flag in {dotted(a) for a in c.args} for c in ctx.calls_in(function)):
            continue
        is_method = bool(function.args.args) and function.args.args[0].arg in {"self", "cls"}
        for site in ctx.calls:
            if ctx.callee(site) is function and _passes_false(site, flag, index, is_method):
                yield site, function


def shared_loops_with_grad(ctx: FileContext) -> Iterator[tuple[ast.AST, ast.Call]]:
    """(data loop, call site) where ``iteration(loader, train=False)`` runs a loop that trains
    only under ``if train:`` with autograd on: nothing in the function switches autograd
    (no ``torch.set_grad_enabled(train)``, no no_grad) and the call is not under no_grad
    (BERT-pytorch's ``test()`` runs ``iteration(epoch, self.test_data, train=False)``)."""
    reported: set[int] = set()
    for site, function in _untrained_runs(ctx):
        if ctx.under_no_grad(site) or _switches_grad(ctx, function) or _switches_grad(ctx, ctx.scope_of(site), site):
            continue
        for loop, _ in _data_loops(ctx):
            if ctx.function(loop) is function and id(loop) not in reported and ctx.has_backward(loop):
                if not any(isinstance(a, Loop) for a in ctx.ancestors(loop) if a is not function):
                    reported.add(id(loop))
                    yield loop, site


def _switches_grad(ctx: FileContext, scope: ast.AST, before: ast.AST | None = None) -> bool:
    """A no_grad / ``set_grad_enabled`` anywhere in ``scope`` (before ``before``, if given)."""
    return any(
        (ctx.is_no_grad(c) or (ctx.qualname(c.func) or "").endswith("set_grad_enabled"))
        and (before is None or position(c) < position(before))
        for c in ctx.calls_in(scope)
    )


def _pretrained_in_eval_mode(ctx: FileContext, model: ast.expr) -> bool:
    """``X.from_pretrained(...)``: Hugging Face returns the model already in eval mode."""
    return (ctx.constructor(model) or "").endswith("from_pretrained")


@rule("TW104", Level.WARNING, hint="wrap the evaluation loop in `with torch.no_grad():`")
def evaluation_without_no_grad(ctx: FileContext) -> Iterator[Hit]:
    """An evaluation loop with no ``torch.no_grad()`` / ``torch.inference_mode()``.

    Why: autograd records every operation and keeps the activations for a backward pass that
    never comes: evaluation takes about twice the memory and runs slower.
    Fix: ``with torch.no_grad():`` (or ``torch.inference_mode()``) around the loop, or the
    ``@torch.no_grad()`` decorator on the evaluation function.
    A no_grad that every caller in this file sets (a ``with`` around the call, a decorator on the
    calling function, ``torch.set_grad_enabled(False)`` before it), followed up the callers, counts.
    Cannot see: a no_grad set by a caller in another file (a loop in a function nothing in this
    file calls or hands on is reported as info), a loop it does not recognise as evaluation
    (no data-like name, no eval()), or a forward inside a method (``model.predict(x)``) of an
    object this file does not show to be a module (not reported: its class may run under no_grad).
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
    """
    for loop, site in shared_loops_with_grad(ctx):
        yield Hit(loop, f"run with train=False on line {site.lineno}, this loop builds autograd graphs it never uses")
    for loop, no_grad in evaluation_loops(ctx):
        if no_grad:
            continue
        message = "evaluation loop builds autograd graphs: no torch.no_grad() around it"
        yield Hit(loop, message, unseen=caller_outside(ctx, ctx.function(loop), "turns it off"))


def optimized_models(ctx: FileContext) -> set[str]:
    """Names whose ``.parameters()`` go into an optimizer built here (``FileContext.trained``)."""
    return set(ctx.trained)


@rule("TW120", Level.ERROR, hint="move backward() out of the no_grad / inference_mode block")
def backward_under_no_grad(ctx: FileContext) -> Iterator[Hit]:
    """``loss.backward()`` inside ``torch.no_grad()`` / ``torch.inference_mode()``.

    Why: no graph was recorded for the loss, so backward raises "element 0 of tensors does
    not require grad" (or, for a loss built outside the block, silently mixes modes).
    Fix: compute the loss and call backward outside the no_grad block.
    Cannot see: no_grad switched on by a caller in another file, or through a variable.
    """
    for call in ctx.calls:
        if ctx.is_backward(call) and ctx.under_no_grad(call):
            yield Hit(call, "backward() inside a no_grad/inference_mode block")


@rule("TW124", Level.WARNING, hint="call model.eval() after loading the weights, before inference")
def load_then_infer_without_eval(ctx: FileContext) -> Iterator[Hit]:
    """``model.load_state_dict(...)`` followed by inference with no ``model.eval()``.

    Why: a freshly built module is in train mode; predictions then use dropout and
    batch statistics and differ from run to run and from the validation numbers.
    Fix: ``model.eval()`` after ``load_state_dict`` (and run inference under no_grad).
    A model built here from layers without dropout or batch norm (``nn.Sequential(nn.Linear,
    nn.ReLU, ...)``) behaves the same in both modes and is not reported.
    Cannot see: an eval() made inside the model's own methods or a helper of another file;
    layers defined where it cannot read them (reported as info, as TW103 does).
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
    """
    for load in ctx.calls:
        model = receiver_of(load)
        if method(load) != "load_state_dict" or ctx.kind(model) in _NOT_MODELS:
            continue
        name, scope = dotted(model), ctx.scope_of(load)
        later = [c for c in ctx.calls_in(scope) if position(c) > position(load)]
        trains_later = any(ctx.is_backward(c) or any(ctx.is_backward(i) for i in _helper_calls(ctx, c)) for c in later)
        if name is None or trains_later:
            continue
        runs = [c for c in later if dotted(c.func) in {name, f"{name}.forward", f"{name}.generate"}]
        if runs and last_mode_before(ctx, scope, runs[0]) != "eval" and not mode_free(ctx, model):
            message = f"weights loaded, then {name} runs on line {runs[0].lineno} without {name}.eval()"
            yield mode_hit(ctx, load, [model], message)
