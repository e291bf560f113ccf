"""Rules about the training step itself: backward, zero_grad, step, accumulation (host syncs: syncs.py)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword, method
from torchwise.lint.context import FileContext, backward_loss, position
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.evidence import unread, unread_reaching, values_of
from torchwise.lint.findings import Edit, Hit, Level, Unseen
from torchwise.lint.registry import rule
from torchwise.lint.rules.data import argparse_default


def _stepped_optimizer(ctx: FileContext, step: ast.Call) -> str | None:
    """The optimizer a step updates: ``opt`` for ``opt.step()`` and ``scaler.step(opt)``."""
    if ctx.kind(receiver_of(step)) == "scaler":
        return dotted(step.args[0]) if step.args else None
    return dotted(receiver_of(step))


def _zeroes_grads(ctx: FileContext, root: ast.AST) -> bool:
    nodes = [*ctx.walk(root), *ctx.reached_calls(root)]
    return any(ctx.is_zero_grad(n) for n in nodes)


@rule("TW101", Level.ERROR, hint="call optimizer.zero_grad() once per optimizer step in this loop")
def backward_without_zero_grad(ctx: FileContext) -> Iterator[Hit]:
    """``backward()`` and ``step()`` in a loop that never zeroes the gradients.

    Why: ``.grad`` adds up across backward calls, so every step applies the sum of all
    gradients so far and training diverges. Deliberate accumulation still zeroes them, under
    the same ``if (i + 1) % k == 0`` as the step, and is not reported.
    Fix: call ``optimizer.zero_grad()`` in the loop (before ``backward`` or after ``step``).
    Cannot see: a zero_grad made by a helper in another file or by a framework hook; it
    needs the backward and the step in one loop of this file. Distributed autograd
    (``dist_autograd.backward``) keeps gradients per context and is not reported.
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
    """
    reported: set[ast.AST] = set()
    for call in ctx.calls:
        loops = ctx.loops(call)
        if not loops or loops[0] in reported or not ctx.is_backward(call):
            continue
        if (ctx.qualname(call.func) or "").endswith("distributed.autograd.backward"):
            continue  # gradients go to the autograd context, not to .grad
        loop = loops[0]
        steps = any(ctx.is_optimizer_step(c) for c in ctx.reached_calls(loop))
        if steps and not _zeroes_grads(ctx, loop):
            reported.add(loop)
            unseen = unread_reaching(ctx, ctx.calls_in(loop), {"model", "optimizer"}, "zeroes the gradients")
            yield Hit(call, "backward() in a loop that steps the optimizer but never calls zero_grad()", unseen=unseen)


def _leads_to_backward(ctx: FileContext, call: ast.Call) -> bool:
    if ctx.is_backward(call):
        return True
    target = ctx.callee(call)
    return target is not None and any(ctx.is_backward(c) for c in ctx.reached_calls(target, 1))


@rule("TW102", Level.ERROR, hint="order each step as zero_grad(), backward(), step()")
def step_without_backward(ctx: FileContext) -> Iterator[Hit]:
    """``optimizer.step()`` with no ``backward()`` before it, or ``zero_grad()`` in between.

    Why: without a backward the step uses stale or no gradients; a ``zero_grad()`` between
    ``backward()`` and ``step()`` throws the fresh gradients away, so the model never learns.
    Fix: keep the order ``zero_grad()`` -> ``backward()`` -> ``step()`` in every iteration.
    Cannot see: a backward run by a helper in another file (then it may report a step as
    having none); closures other than ``step(closure)``. Gradients set by hand
    (``p.grad = g``, ``p._grad = g``) count as a backward.
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
    """
    for step in ctx.calls:
        loops = ctx.loops(step)
        if not loops or not ctx.is_optimizer_step(step):
            continue
        if ctx.kind(receiver_of(step)) == "optimizer" and step.args:
            continue  # step(closure): the closure runs the backward (LBFGS)
        # The outermost loop: `backward(); for opt in optimizers: opt.step()` is fine.
        region = loops[-1]
        earlier = [c for c in ctx.calls_in(region) if position(c) < position(step)]
        backwards = [c for c in earlier if _leads_to_backward(ctx, c)]
        if not backwards:
            if _iterates_steps(ctx, region) and not _sets_grads(ctx, region):
                unseen = unread_reaching(ctx, earlier, {"model", "optimizer"}, "runs the backward")
                yield Hit(step, "optimizer step with no backward() before it in this loop", unseen=unseen)
            continue
        stepped = _stepped_optimizer(ctx, step)
        for node in ctx.walk(region):
            if not ctx.is_zero_grad(node):
                continue
            between = position(backwards[-1]) < position(node) < position(step)
            if between and _zeroes_optimizer(ctx, node, stepped):
                yield Hit(node, "zero_grad() between backward() and step() discards the gradients")


def _sets_grads(ctx: FileContext, region: ast.AST) -> bool:
    """``p.grad = g`` / ``p.grad += g`` / ``p._grad = g`` with a value: gradients given by hand
    (an A2C/A3C master applying its workers' gradients), no backward needed."""
    return any(
        isinstance(n, ast.Assign | ast.AugAssign)
        and not is_constant(n.value, None)
        and any(isinstance(t, ast.Attribute) and t.attr in {"grad", "_grad"} for t in _targets(n))
        for n in ctx.walk(region)
    )


def _targets(node: ast.Assign | ast.AugAssign) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


_STEP_ITERATORS = frozenset({"range", "enumerate", "zip", "tqdm", "trange", "islice"})


def _iterates_steps(ctx: FileContext, loop: ast.AST) -> bool:
    """A loop over batches, steps or epochs, not one over optimizers inside a backward hook."""
    if isinstance(loop, ast.While):
        return True
    iterable = getattr(loop, "iter", None)
    if iterable is None:
        return False
    calls = (n for n in ast.walk(iterable) if isinstance(n, ast.Call))
    named = any((dotted(c.func) or "").rsplit(".", 1)[-1] in _STEP_ITERATORS for c in calls)
    return named or bool(ctx.data_names(iterable))


def _zeroes_optimizer(ctx: FileContext, node: ast.AST, stepped: str | None) -> bool:
    if not isinstance(node, ast.Call) or method(node) != "zero_grad":
        return True
    zeroed = receiver_of(node)
    return dotted(zeroed) == stepped or ctx.kind(zeroed) == "model"


def _through_scale_loss(ctx: FileContext, loss: ast.expr | None, scope: ast.AST) -> ast.expr | None:
    """``scaled_loss`` bound by ``with amp.scale_loss(loss / k, optimizer) as scaled_loss:``
    (apex) stands for the loss handed to ``scale_loss``."""
    name = dotted(loss) if loss is not None else None
    for node in ctx.walk(scope):
        if not isinstance(node, ast.With | ast.AsyncWith):
            continue
        for item in node.items:
            value = item.context_expr
            if dotted(item.optional_vars) == name and isinstance(value, ast.Call) and method(value) == "scale_loss":
                return value.args[0] if value.args else None
    return loss


def _scaled(ctx: FileContext, loss: ast.expr | None, scope: ast.AST) -> bool:
    """Whether the loss is divided or multiplied by something before backward."""
    scaling = (ast.Div, ast.Mult)
    loss = _through_scale_loss(ctx, loss, scope)
    if isinstance(loss, ast.BinOp) and isinstance(loss.op, scaling):
        return True
    name = dotted(loss) if loss is not None else None
    if name is None:
        return True  # built somewhere we cannot see: give it the benefit of the doubt
    for node in ctx.walk(scope):
        if isinstance(node, ast.AugAssign) and dotted(node.target) == name:
            if isinstance(node.op, scaling):
                return True
        if isinstance(node, ast.Assign) and any(dotted(t) == name for t in node.targets):
            if isinstance(node.value, ast.BinOp) and isinstance(node.value.op, scaling):
                return True
    return False


def _owned_by_other_step(ctx: FileContext, backward: ast.Call, step: ast.Call, loop: ast.AST) -> bool:
    """Whether the first optimizer step after ``backward`` updates another optimizer (the
    discriminator's own step right after its backward)."""
    later = (c for c in ctx.calls_in(loop) if position(c) > position(backward))
    first = next((c for c in later if ctx.is_optimizer_step(c)), None)
    return first is not None and _stepped_optimizer(ctx, first) != _stepped_optimizer(ctx, step)


@rule("TW116", Level.WARNING, hint="divide the loss by the number of accumulation steps")
def accumulation_without_loss_scaling(ctx: FileContext) -> Iterator[Hit]:
    """Gradient accumulation (``step()`` under ``% k``) with an undivided loss.

    Why: summing k backward passes makes the gradient k times larger than one batch of the
    same total size, which acts like a k-times larger learning rate.
    Fix: ``loss = loss / accumulation_steps`` before ``backward()``.
    It follows ``with amp.scale_loss(loss / k, optimizer) as scaled_loss:`` (apex) back to the
    loss handed in.
    An optimizer built here with its learning rate divided by something (pytorch-YOLOv4's
    ``lr=config.learning_rate / config.batch`` over summed losses) normalises the accumulated
    gradient through the rate and is not reported.
    An accumulation count whose default, where this file shows it, is 1 (a parameter's or an
    option's) accumulates nothing unless raised: info.
    Cannot see: a loss divided inside the model or a helper, or a loss built elsewhere (it
    then stays quiet); a step under ``%`` that belongs to another optimizer (GAN) is skipped.
    A loss made by code it cannot read that is handed the accumulation count is info.
    """
    reported: set[ast.Call] = set()
    for step in ctx.calls:
        loops = ctx.loops(step)
        if not loops or not ctx.is_optimizer_step(step) or not ctx.under_modulo(step, loops[0]):
            continue
        if _lr_divided(ctx, step):
            continue  # lr = base_lr / batch: the summed gradient is normalised by the rate (darknet's way)
        scope = ctx.scope_of(step)
        guard = ctx.modulo_guard(step, loops[0])
        for call in ctx.calls_in(loops[0]):
            if call in reported or not ctx.is_backward(call):
                continue
            if guard in ctx.ancestors(call) or _owned_by_other_step(ctx, call, step, loops[0]):
                continue  # a GAN's `if i % n_critic == 0:` generator update, not accumulation
            if not _scaled(ctx, backward_loss(call), scope):
                reported.add(call)
                message = (
                    f"gradients accumulate until the step on line {step.lineno}, "
                    "but the loss is not divided by the accumulation steps"
                )
                if guard is not None and _accumulates_one_by_default(ctx, guard, scope):
                    # Towards-Realtime-MOT's --accumulated-batches (default 1): off unless raised.
                    yield Hit(
                        call, f"{message} (if the accumulation count is raised from its default of 1)", level=Level.INFO
                    )
                else:
                    yield Hit(call, message, unseen=_divided_where_unread(ctx, backward_loss(call), guard, scope))


def _divided_where_unread(
    ctx: FileContext, loss: ast.expr | None, guard: ast.If | None, scope: ast.AST
) -> tuple[Unseen, ...]:
    """The loss made by code lint cannot read that is handed the accumulation count of the step's
    ``if i % k == 0:`` (``loss = compute_loss(out, y, args.accumulation_steps)``): it may divide
    by it."""
    name = dotted(loss) if loss is not None else None
    if name is None or guard is None:
        return ()
    counts = {dotted(n.right) for n in ast.walk(guard.test) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)}
    made = [
        n.value
        for n in ctx.walk(scope)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and any(dotted(t) == name for t in n.targets)
    ]
    return tuple(
        Unseen(f"{who}(...), handed the accumulation count,", "divides the loss by it")
        for call in made
        if (who := unread(ctx, call)) is not None
        and counts & {dotted(v) for v in values_of(call)} - {None}
    )


def _accumulates_one_by_default(ctx: FileContext, guard: ast.If, scope: ast.AST) -> bool:
    """The ``k`` of ``if (i + 1) % k == 0:`` defaults to 1 where this file shows its default (a
    parameter's default, an argparse option's): by default every batch steps, nothing accumulates."""
    divisors = [n.right for n in ast.walk(guard.test) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)]
    defaults: list[ast.expr | None] = []
    for divisor in divisors:
        name = divisor.attr if isinstance(divisor, ast.Attribute) else dotted(divisor)
        if isinstance(divisor, ast.Constant):
            defaults.append(divisor)
            continue
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) and isinstance(divisor, ast.Name):
            given = _parameter_default(scope, divisor.id)
            if given is not None:
                defaults.append(given)
        option = argparse_default(ctx, name or "")
        if option is not False:
            defaults.append(option)  # type: ignore[arg-type]
    return bool(defaults) and all(isinstance(d, ast.Constant) and d.value == 1 for d in defaults)


def _parameter_default(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> ast.expr | None:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
    return next((default for arg, default in pairs if arg.arg == name), None)


def _lr_divided(ctx: FileContext, step: ast.Call) -> bool:
    """The stepped optimizer was built here with ``lr=a / b`` (keyword or second argument)."""
    built = [v for v in ctx.assignments.get(dotted(receiver_of(step)) or "", []) if isinstance(v, ast.Call)]
    for call in built:
        rate = keyword(call, "lr")
        if rate is None and len(call.args) > 1:
            rate = call.args[1]
        if isinstance(rate, ast.BinOp) and isinstance(rate.op, ast.Div):
            return True
    return False


@rule("TW123", Level.INFO, hint="use zero_grad(set_to_none=True) (the default) or p.grad = None")
def zero_grad_to_zeros(ctx: FileContext) -> Iterator[Hit]:
    """``zero_grad(set_to_none=False)`` or a manual ``p.grad.zero_()`` loop.

    Why: filling gradients with zeros launches a memset per parameter and keeps the memory
    allocated; setting them to None is free and lets the next backward write them fresh.
    Fix: ``optimizer.zero_grad()`` (``set_to_none=True`` is the default), or ``p.grad = None``.
    Info, not a warning: zeros cost time and memory but train the same (a module's own
    ``zero_grad`` written this way, as MAML-Pytorch's and improved-diffusion's are, is no bug).
    Cannot see: code in another file that reads ``.grad`` after zeroing and needs zeros there
    (then keep it and ``# noqa: TW123``); ``p.grad += g`` in this file keeps it quiet.
    """
    adds_into_grads = any(
        isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Attribute) and n.target.attr == "grad"
        for n in ctx.nodes
    )
    for call in ctx.calls:
        flag = keyword(call, "set_to_none")
        if method(call) == "zero_grad" and is_constant(flag, False) and not adds_into_grads:
            kw = next(k for k in call.keywords if k.arg == "set_to_none")
            yield Hit(
                call,
                "zero_grad(set_to_none=False) writes zeros instead of freeing gradients",
                edits=(Edit.replace(kw, "set_to_none=True"),),
            )
            continue
        grads = receiver_of(call)
        if method(call) != "zero_" or not isinstance(grads, ast.Attribute):
            continue
        if grads.attr == "data":  # p.grad.data.zero_()
            grads = grads.value
        if not isinstance(grads, ast.Attribute) or grads.attr != "grad":
            continue
        statement = ctx.parents.get(call)
        edits = ()
        if isinstance(statement, ast.Expr):
            edits = (Edit.replace(statement, f"{ast.unparse(grads)} = None"),)
        yield Hit(call, f"{ast.unparse(grads)}.zero_() fills the gradient with zeros", edits=edits)
