"""Rules about autograd itself: backward through a freed graph, in-place updates of leaves."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword, method
from torchwise.lint.context import FileContext, backward_loss, position
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule

_DETACHING = re.compile(r"detach|repackage|init_hidden|zero_state|initial_state", re.I)
_LEAF_MAKERS = frozenset({"Parameter", "requires_grad_"})
# In-place tensor methods that autograd refuses on a leaf that requires grad.
_IN_PLACE = frozenset(
    "add_ sub_ mul_ div_ addcmul_ addcdiv_ copy_ fill_ zero_ clamp_ clip_ normal_ uniform_ "
    "mul_ pow_ sqrt_ exp_ neg_ masked_fill_ index_add_ scatter_ lerp_".split()
)


def _retains(call: ast.Call) -> bool:
    return is_constant(keyword(call, "retain_graph"), True)


def _stores(ctx: FileContext, root: ast.AST, name: str) -> list[ast.AST]:
    """Statements under ``root`` (same function) that assign ``name``."""
    found = []
    for node in ctx.walk(root):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.For | ast.AsyncFor | ast.With):
            targets = [node.target] if isinstance(node, ast.For | ast.AsyncFor) else []
        if any(dotted(n) == name for t in targets for n in ast.walk(t)):
            found.append(node)
    return found


def _exclusive(ctx: FileContext, first: ast.AST, second: ast.AST) -> bool:
    """Whether two nodes sit in different branches of one ``if``/``try`` (never both run)."""
    chain = [first, *ctx.ancestors(first)]
    child, parent = second, ctx.parents.get(second)
    while parent is not None and parent not in chain:
        child, parent = parent, ctx.parents.get(parent)
    if not isinstance(parent, ast.If | ast.Try):
        return False
    index = chain.index(parent)
    first_child = chain[index - 1] if index else first

    def branch(node: ast.AST) -> str:
        return next(f for f, value in ast.iter_fields(parent) if _holds(value, node))

    return branch(first_child) != branch(child)


def _holds(value: object, node: ast.AST) -> bool:
    return value is node or (isinstance(value, list) and any(v is node for v in value))


def _carried_state(ctx: FileContext, loop: ast.AST) -> Iterator[tuple[ast.Assign, str]]:
    """``out, hidden = model(x, hidden)`` in ``loop``: a model's state fed into the next step."""
    for node in ctx.walk(loop):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        if ctx.kind(node.value.func) != "model" or ctx.under_no_grad(node):
            continue  # a state computed under no_grad carries no graph (cleanrl's rollout)
        stored = {dotted(n) for t in node.targets for n in ast.walk(t)} - {None}
        passed = {dotted(a) for a in node.value.args} | {dotted(k.value) for k in node.value.keywords}
        for name in sorted(stored & passed - {None}):  # type: ignore[operator]
            yield node, name


def _fresh_each_step(ctx: FileContext, loop: ast.AST, carried: ast.Assign, name: str) -> bool:
    """Detached (``.detach()``, ``repackage_hidden``) or rebuilt (``init_hidden``) in the loop."""
    if any(s is not carried for s in _stores(ctx, loop, name)):
        return True
    for call in ctx.calls_in(loop):
        words = f"{dotted(call.func) or ''} {method(call) or ''}"
        mentions = any(dotted(n) == name for a in [*call.args, receiver_of(call)] if a for n in ast.walk(a))
        if _DETACHING.search(words) and (mentions or not call.args):
            return True
    return False


@rule(
    "TW126",
    Level.ERROR,
    hint="recompute the loss each step, or .detach() the state carried to the next step",
)
def backward_through_freed_graph(ctx: FileContext) -> Iterator[Hit]:
    """A second ``backward()`` through a graph the first one already freed.

    Why: ``backward()`` frees the graph's saved tensors, so a second call on the same loss,
    a loss built once before the loop, or a recurrent state fed from one batch into the next
    without ``.detach()`` raises "Trying to backward through the graph a second time"; the
    message's own ``retain_graph=True`` only hides the leak (the graph grows every step).
    Fix: call backward once per forward; recompute the loss inside the loop; carry
    ``hidden = hidden.detach()`` (truncated BPTT) across batches.
    A state computed under ``torch.no_grad()`` (an RL rollout's LSTM state) holds no graph and is
    not reported.
    Cannot see: graphs built in helpers of other files, losses held in containers, and a
    first backward that ran with ``retain_graph=True`` passed through a variable.
    """
    # `loss.backward()` or `accelerator.backward(loss)`; not `x.backward(arg)` where the
    # receiver may be an engine (DeepSpeed's `model.backward(loss)`) rather than a loss.
    backwards = [
        c
        for c in ctx.calls
        if ctx.is_backward(c)
        and backward_loss(c) is not None
        and not (c.args and backward_loss(c) is receiver_of(c))
    ]
    for first in backwards:
        name = dotted(backward_loss(first))  # type: ignore[arg-type]
        if name is None or _retains(first):
            continue
        scope = ctx.scope_of(first)
        stores = _stores(ctx, scope, name)
        loops = ctx.loops(first)
        if loops and stores and not any(s is loops[0] or loops[0] in ctx.ancestors(s) for s in stores):
            if all(position(s) < position(loops[0]) for s in stores):
                yield Hit(
                    first,
                    f"{name} is built once before the loop, so the second "
                    "iteration's backward() runs through a freed graph",
                )
                continue
        for second in backwards:
            if position(second) <= position(first) or dotted(backward_loss(second)) != name:  # type: ignore[arg-type]
                continue
            if ctx.scope_of(second) is not scope or _exclusive(ctx, first, second):
                continue
            between = [s for s in stores if position(first) < position(s) < position(second)]
            if not between:
                yield Hit(second, f"second {name}.backward() on a graph the first one freed")
            break
    for loop in (n for n in ctx.nodes if isinstance(n, ast.For | ast.While)):
        if not ctx.has_backward(loop):
            continue
        for assign, name in _carried_state(ctx, loop):
            stores = _stores(ctx, ctx.scope_of(loop), name)
            outside = [s for s in stores if s is not loop and loop not in ctx.ancestors(s)]
            if outside and not _fresh_each_step(ctx, loop, assign, name):
                yield Hit(
                    assign, f"{name} carries the previous batch's graph into this backward(); detach it each step"
                )


def _leaves(ctx: FileContext) -> set[str]:
    """Names only ever assigned a leaf that requires grad."""
    leaves = set()
    for name, values in ctx.assignments.items():
        if values and all(_makes_leaf(ctx, v) for v in values):
            leaves.add(name)
    return leaves


def _makes_leaf(ctx: FileContext, value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    last = (ctx.qualname(value.func) or method(value) or "").rsplit(".", 1)[-1]
    return last in _LEAF_MAKERS or is_constant(keyword(value, "requires_grad"), True)


def _parameter_loop_names(ctx: FileContext, node: ast.AST) -> set[str]:
    """``p`` in an enclosing ``for p in model.parameters():``."""
    names = set()
    for loop in ctx.loops(node):
        if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call):
            if method(loop.iter) == "parameters" and isinstance(loop.target, ast.Name):
                names.add(loop.target.id)
    return names


def _in_place_target(node: ast.AST) -> ast.expr | None:
    """What an in-place statement or call writes to: ``w`` in ``w -= ...``, ``w.add_(...)``,
    ``w[0] = ...``."""
    if isinstance(node, ast.AugAssign):
        return node.target
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
        return node.targets[0].value
    if isinstance(node, ast.Call) and method(node) in _IN_PLACE:
        return receiver_of(node)
    return None


@rule("TW127", Level.ERROR, hint="update it under `with torch.no_grad():` (or use an optimizer)")
def in_place_leaf_update(ctx: FileContext) -> Iterator[Hit]:
    """An in-place update of a leaf tensor that requires grad, outside ``torch.no_grad()``.

    Why: autograd refuses to record an in-place change of a leaf it must differentiate:
    ``w -= lr * w.grad`` raises "a leaf Variable that requires grad is being used in an
    in-place operation". (``w = w - lr * w.grad`` runs but makes ``w`` a non-leaf whose
    ``.grad`` is None next step.)
    Fix: ``with torch.no_grad(): w -= lr * w.grad`` then ``w.grad = None``; or let an
    optimizer do the update.
    Cannot see: leaves made in another file or through a helper, or held in lists and dicts
    (``params[0] -= ...``); updates through ``.data`` are allowed (the legacy escape hatch).
    """
    leaves = ctx.memo("leaves", lambda: _leaves(ctx))
    for node in ctx.nodes:
        target = _in_place_target(node)
        if not isinstance(target, ast.Name):
            continue  # `w.data -= ...`, `p.grad.zero_()` and the like are fine
        if target.id in leaves or target.id in _parameter_loop_names(ctx, node):
            if not ctx.under_no_grad(node):
                yield Hit(node, f"in-place update of {target.id}, a leaf that requires grad")
