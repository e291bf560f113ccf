"""TW105: a model switched to eval inside the training loop and never switched back."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext, Loop
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.evidence import handed_to_unread
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.evaluation import optimized_models
from torchwise.lint.rules.modes import direct_mode, mode_of_call


@rule("TW105", Level.WARNING, hint="call model.train() at the start of each epoch's training")
def eval_without_train_again(ctx: FileContext) -> Iterator[Hit]:
    """``model.eval()`` inside the training loop with no ``model.train()`` to switch back.

    Why: after the first validation the model stays in eval mode, so every later epoch
    trains without dropout and with frozen batch-norm statistics.
    Fix: ``model.train()`` at the top of each epoch (or right after evaluating).
    Cannot see: a ``train()`` made in a helper of another file: where the loop hands the model to
    a function it cannot read, it reports the eval as info.
    A model the file never hands to an optimizer while it builds one for other models, and
    that the loop calls only under no_grad (an EMA copy such as stylegan2's ``g_ema``, a
    frozen teacher), stays in eval on purpose and is not reported; so does a model handed to a
    helper that switches its parameter to eval when it is not the model the optimizer trains
    (pytorch-YOLOv4's ``evaluate(eval_model, ...)`` on a fresh copy built each epoch), nor an
    alias the loop gives only other objects; an alias that is the trained model on one branch
    and a copy on another (FixMatch's ``test_model``, chosen by ``--use-ema``) is info.
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
    """
    optimized = optimized_models(ctx)
    reported: set[ast.AST] = set()
    for loop in (n for n in ctx.nodes if isinstance(n, Loop)):
        reached = ctx.reached_calls(loop)
        if not any(ctx.is_backward(c) for c in reached):
            continue
        if any(ctx.is_model_mode(c, "train") for c in reached):
            continue
        for call in ctx.calls_in(loop):
            if call not in reported and mode_of_call(ctx, call) == "eval":
                if direct_mode(ctx, call):
                    switched = dotted(receiver_of(call))
                    if optimized and switched and switched not in optimized and _only_inferred(ctx, switched, loop):
                        continue  # never trained here: an EMA copy or a frozen teacher
                else:
                    switched = _argument_switched(ctx, call)
                    if switched and switched not in optimized and _built_in(ctx, switched, loop):
                        continue  # evaluate(eval_model, ...): a copy built here goes to eval, not the model trained
                aliases = _aliases(ctx, switched, loop) if switched and switched not in optimized else set()
                if aliases and not aliases & optimized:
                    continue  # test_model = ema.module: a copy goes to eval
                reported.add(call)
                message = "model switched to eval() in the training loop and never back to train()"
                if aliases - optimized:
                    what = f"{switched} is the trained model on one branch only ({', '.join(sorted(aliases))})"
                    yield Hit(call, f"{message} where {what}", level=Level.INFO)
                else:
                    yield Hit(call, message, unseen=handed_to_unread(ctx, reached, switched, "calls train() again"))
                break


def _argument_switched(ctx: FileContext, call: ast.Call) -> str | None:
    """The argument of ``helper(...)`` that the helper switches to eval mode, where it switches
    one of its parameters (``def evaluate(model, ...): model.eval()``)."""
    target = ctx.callee(call)
    if target is None:
        return None
    params = [a.arg for a in target.args.args]
    if params[:1] in (["self"], ["cls"]):
        params = params[1:]
    for inner in ctx.reached_calls(target, 1):
        if direct_mode(ctx, inner) != "eval":
            continue
        name = dotted(receiver_of(inner))
        if name in params:
            index = params.index(name)
            given = next((k.value for k in call.keywords if k.arg == name), None)
            if given is None and index < len(call.args):
                given = call.args[index]
            return dotted(given) if given is not None else None
    return None


def _aliases(ctx: FileContext, name: str, loop: ast.AST) -> set[str]:
    """What ``name = other`` gives ``name`` inside the loop, where every value it is given there
    is another name (FixMatch's ``test_model = ema_model.ema`` if ``args.use_ema`` else
    ``model``); empty when any value is something else."""
    values = [
        n.value for n in ctx.walk(loop) if isinstance(n, ast.Assign) and any(dotted(t) == name for t in n.targets)
    ]
    names = {dotted(v) for v in values}
    return {n for n in names if n} if values and None not in names else set()


def _built_in(ctx: FileContext, name: str, loop: ast.AST) -> bool:
    """``name = Net(...)`` inside the loop: a fresh module each pass."""
    return any(
        isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and any(dotted(t) == name for t in n.targets)
        for n in ctx.walk(loop)
    )


def _only_inferred(ctx: FileContext, model: str, loop: ast.AST) -> bool:
    """Every call of ``model(...)`` in the loop runs under no_grad: it builds no graph."""
    return all(ctx.under_no_grad(c) for c in ctx.calls_in(loop) if dotted(c.func) == model)
