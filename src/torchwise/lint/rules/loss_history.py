"""TW160: a backpropagated loss tensor kept across steps (a running sum or a history list).

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "total = 0\\n"
...     "for x, y in loader:\\n"
...     "    loss = criterion(model(x), y)\\n"
...     "    loss.backward()\\n"
...     "    total += loss\\n"
... )
>>> [(f.code, f.line, f.level.value) for f in lint_source(src) if f.code == "TW160"]
[('TW160', 5, 'warning')]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.context import FileContext, Loop, backward_loss, position
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule

# Calls that hand back a value with no graph: a Python number, an array, a detached tensor.
_DETACHING = frozenset({"item", "detach", "tolist", "numpy", "float", "int"})


@rule("TW160", Level.WARNING, hint="keep `loss.item()` (or `loss.detach()`) in the running sum or history")
def loss_kept_with_graph(ctx: FileContext) -> Iterator[Hit]:
    """A backpropagated loss tensor added to a running sum or a history list that outlives the step.

    Why: ``total_loss += loss`` (or ``history.append(loss)``) with the tensor that ``backward()``
    differentiates keeps a reference to each step's autograd graph (PyTorch's FAQ, "Don't
    accumulate history across your training loop"): the sum becomes a chain of graphs as long
    as the epoch, the list holds one device tensor and its graph nodes per step, and memory grows
    until the sum or list is dropped (Pointnet2's ``loss_sum += loss``; a ``train_epoch`` that
    returns ``history_loss`` of live losses).
    Fix: accumulate ``loss.item()`` (or ``loss.detach()``) instead.
    It follows the name that a ``backward()`` in the loop differentiates (``loss.backward()``,
    ``scaler.scale(loss).backward()``, ``(loss / k).backward()``) to an ``acc += loss``,
    ``acc = acc + loss * n`` or ``acc.append(loss)`` in the same loop, where ``acc`` is made
    outside that loop and the loss was last given a value in the loop that is not detached
    (``loss = loss.item()`` first is fine). A sum that is itself backpropagated later (an
    accumulation of losses for one backward) is not reported.
    Cannot see: a loss kept through another name (``l = loss; acc += l``), inside a metre object
    (``losses.update(loss)``, whose class may sum the tensor) or a helper, or a loss whose
    backward runs in a helper; a loss of a step with no backward in the loop (an evaluation
    under no_grad has no graph to keep).
    """
    for loop in (n for n in ctx.nodes if isinstance(n, Loop)):
        losses = _backpropagated(ctx, loop)
        if not losses or not _steps_over_data(ctx, loop):
            continue
        for node in ctx.walk(loop):
            kept = _kept(node)
            if kept is None:
                continue
            holder, value = kept
            name = _loss_in(value, losses)
            if name is None or _innermost_loop(ctx, node) is not loop or ctx.under_no_grad(node):
                continue
            if _made_inside(ctx, loop, holder) or not _live_when_kept(ctx, loop, node, name):
                continue
            if _backpropagated_later(ctx, holder):
                continue
            how = "appended to" if isinstance(node, ast.Expr) else "added to"
            yield Hit(
                node,
                f"{name} (backpropagated at each step) is {how} {holder} with its autograd graph: "
                f"{holder} keeps every step's graph alive; keep {name}.item()",
            )


def _steps_over_data(ctx: FileContext, loop: ast.AST) -> bool:
    """A loop of training steps: ``while`` (a step count), or ``for`` over a loader or data split,
    directly or through the name it was given (``bar = tqdm(loader)``). A ``for _ in
    range(n_critic)`` repeats one step's update a few times and its sum is read the same step."""
    if isinstance(loop, ast.While):
        return True
    iterable = loop.iter  # type: ignore[attr-defined]
    if ctx.data_names(iterable):
        return True
    name = dotted(iterable)
    return name is not None and any(ctx.data_names(v) for v in ctx.assignments.get(name, []))


def _backpropagated(ctx: FileContext, loop: ast.AST) -> set[str]:
    """Names a ``backward()`` directly in ``loop`` (not a nested loop) differentiates."""
    names: set[str] = set()
    for call in ctx.calls_in(loop):
        if ctx.is_backward(call) and _innermost_loop(ctx, call) is loop:
            target = backward_loss(call)
            if target is not None:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _innermost_loop(ctx: FileContext, node: ast.AST) -> ast.AST | None:
    loops = ctx.loops(node)
    return loops[0] if loops else None


def _kept(node: ast.AST) -> tuple[str, ast.expr] | None:
    """(holder, value) for ``holder += value``, ``holder = holder + value``, ``holder.append(value)``."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and (name := dotted(node.target)):
        return name, node.value
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.BinOp):
        name = dotted(node.targets[0])
        if name and isinstance(node.value.op, ast.Add) and dotted(node.value.left) == name:
            return name, node.value.right
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and method(node.value) == "append":
        holder = dotted(receiver(node.value))
        if holder and len(node.value.args) == 1:
            return holder, node.value.args[0]
    return None


def _loss_in(value: ast.expr, losses: set[str]) -> str | None:
    """The loss ``value`` carries as a tensor: ``loss`` or ``loss * n``; not ``loss.item()``."""
    if isinstance(value, ast.Name):
        return value.id if value.id in losses else None
    if isinstance(value, ast.BinOp):
        return _loss_in(value.left, losses) or _loss_in(value.right, losses)
    return None


def _made_inside(ctx: FileContext, loop: ast.AST, holder: str) -> bool:
    """The holder is (re)made in the loop: it lives for one step, not across them."""
    return any(
        isinstance(n, ast.Assign) and any(dotted(t) == holder for t in n.targets) and _kept(n) is None
        for n in ctx.walk(loop)
    )


def _live_when_kept(ctx: FileContext, loop: ast.AST, kept: ast.AST, name: str) -> bool:
    """The loss was last given a value in the loop before ``kept``, and that value has a graph."""
    given = [
        n
        for n in ctx.walk(loop)
        if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign)
        and position(n) < position(kept)
        and any(dotted(t) == name for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
    ]
    if not given:
        return False  # made outside the loop: not this step's loss
    last = max(given, key=position)
    value = last.value
    return not (
        value is None
        or (isinstance(value, ast.Call) and (method(value) or dotted(value.func)) in _DETACHING)
        or (isinstance(value, ast.Attribute) and value.attr == "data")
    )


def _backpropagated_later(ctx: FileContext, holder: str) -> bool:
    """The holder (or a value made from it) is differentiated: a sum of losses for one backward."""
    derived = {holder}
    for node in ctx.nodes:
        if isinstance(node, ast.Assign) and any(
            isinstance(n, ast.Name | ast.Attribute) and dotted(n) in derived for n in ast.walk(node.value)
        ):
            derived |= {d for t in node.targets if (d := dotted(t))}
    for call in ctx.calls:
        target = backward_loss(call) if ctx.is_backward(call) else None
        if target is not None and any(dotted(n) in derived for n in ast.walk(target)):
            return True
    return False
