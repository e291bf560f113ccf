"""TW107: host syncs (``.item()``, ``.cpu()``, ``print(tensor)``) on every training step, and
the syncs that only look like it: periodic ones, failure paths, environment actions, the
validation branch of a shared loop."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, has_modulo, method
from torchwise.lint.context import FileContext, position
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule

_SYNC_METHODS = frozenset({"item", "cpu", "numpy", "tolist"})
_TENSOR_NAMES = re.compile(r"^(loss|losses|logits|outputs?|preds?|predictions?)(_\w+)?$")


def _batch_loop(ctx: FileContext, node: ast.AST) -> ast.AST | None:
    """The loop around ``node`` that runs backward itself (not only in a nested loop)."""
    for loop in ctx.loops(node):
        backwards = (c for c in ctx.calls_in(loop) if ctx.is_backward(c))
        if any(ctx.loops(b)[0] is loop for b in backwards):
            return loop
    return None


def _printed_tensor(call: ast.Call) -> bool:
    for arg in call.args:
        parts = (
            [v.value for v in arg.values if isinstance(v, ast.FormattedValue)]
            if isinstance(arg, ast.JoinedStr)
            else [arg]
        )
        for part in parts:
            name = dotted(part) if isinstance(part, ast.Name | ast.Attribute) else None
            if name and _TENSOR_NAMES.match(name.rsplit(".", 1)[-1]):
                return True
    return False


def _fresh_from_loader(ctx: FileContext, call: ast.Call) -> bool:
    """``labels.numpy()`` on a loop variable of the data loop that nothing reassigned yet: the
    DataLoader yields host tensors, so reading them waits for nothing."""
    target = receiver_of(call)
    if isinstance(target, ast.Attribute) and target.attr == "data":
        target = target.value
    if not isinstance(target, ast.Name):
        return False
    for loop in ctx.loops(call):
        if not isinstance(loop, ast.For | ast.AsyncFor):
            continue
        names = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        if target.id not in names:
            continue
        before = (
            n
            for n in ctx.walk(loop)
            if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign)
            and (n.end_lineno or 0, n.end_col_offset or 0) < position(call)
        )
        return not any(
            isinstance(t, ast.Name) and t.id == target.id
            for n in before
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        )
    return False


_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


def _leaves(statement: ast.stmt) -> bool:
    """A statement that ends the loop it is in for good: raise, return, break, sys.exit()."""
    if isinstance(statement, ast.Raise | ast.Return | ast.Break):
        return True
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and dotted(statement.value.func) in _EXITS
    )


def _on_exit_path(ctx: FileContext, node: ast.AST, loop: ast.AST) -> bool:
    """Whether ``node`` sits in an ``if`` branch inside ``loop`` that ends by leaving it
    (``if not math.isfinite(loss): print(...); sys.exit(1)``): it runs at most once."""
    child = node
    for ancestor in ctx.ancestors(node):
        if ancestor is loop:
            return False
        if isinstance(ancestor, ast.If) and child is not ancestor.test:
            branch = ancestor.body if child in ancestor.body else ancestor.orelse
            if branch and _leaves(branch[-1]):
                return True
        child = ancestor
    return False


def _periodic(ctx: FileContext, node: ast.AST, loop: ast.AST) -> bool:
    """Whether an ``if`` inside ``loop`` runs ``node`` only now and then: ``step % k == 0``,
    a flag set from one (stylegan2's ``g_regularize = i % args.g_reg_every == 0``), or an
    elapsed-time test (vicreg's ``if current_time - last_logging > args.log_freq_time``)."""
    scope = ctx.scope_of(node)
    for ancestor in ctx.ancestors(node):
        if ancestor is loop:
            return False
        if not isinstance(ancestor, ast.If) or node in ast.walk(ancestor.test):
            continue
        names = [dotted(n) or "" for n in ast.walk(ancestor.test) if isinstance(n, ast.Name | ast.Attribute)]
        flags = [v for n in names for v in ctx.assignments.get(n, []) if ctx.scope_of(v) is scope]
        if has_modulo(ancestor.test) or any(has_modulo(v) for v in flags):
            return True
        if any(_compares_time(c) for c in ast.walk(ancestor.test) if isinstance(c, ast.Compare)):
            return True
    return False


def _compares_time(compare: ast.Compare) -> bool:
    names = (dotted(n) or "" for n in ast.walk(compare) if isinstance(n, ast.Name | ast.Attribute))
    return any("time" in name.lower() for name in names)


def _branch_tests(ctx: FileContext, node: ast.AST, loop: ast.AST) -> set[tuple[str, bool]]:
    """(``if`` test, whether ``node`` is in its body) for each ``if`` between node and loop."""
    found: set[tuple[str, bool]] = set()
    child = node
    for ancestor in ctx.ancestors(node):
        if ancestor is loop:
            break
        if isinstance(ancestor, ast.If) and child is not ancestor.test:
            found.add((ast.unparse(ancestor.test), child in ancestor.body))
        child = ancestor
    return found


def _on_the_branch_without_backward(ctx: FileContext, call: ast.Call, loop: ast.AST) -> bool:
    """A shared train/validate loop (pytorch-original-transformer): every backward sits under
    ``if is_train:`` and the sync under its ``else:``: that pass trains nothing."""
    backward_sides = [_branch_tests(ctx, b, loop) for b in ctx.calls_in(loop) if ctx.is_backward(b)]
    return any(
        all((test, not in_body) in sides for sides in backward_sides)
        for test, in_body in _branch_tests(ctx, call, loop)
    )


def _handed_to_environment(ctx: FileContext, call: ast.Call, loop: ast.AST) -> bool:
    """``actions = q.argmax(1).cpu().numpy()`` then ``envs.step(actions)``: the environment
    runs on the host, so the action must come back every step whatever the logging does."""
    statement = ctx.statement(call)
    if not isinstance(statement, ast.Assign):
        return False
    names = {n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return any(
        method(c) == "step"
        and ctx.kind(receiver_of(c)) not in {"optimizer", "scaler", "scheduler"}
        and any(isinstance(n, ast.Name) and n.id in names for a in c.args for n in ast.walk(a))
        for c in ctx.calls_in(loop)
        if position(c) > position(call)
    )


@rule("TW107", Level.INFO, hint="accumulate on the device and sync every N steps (if step % N == 0)")
def host_sync_every_step(ctx: FileContext) -> Iterator[Hit]:
    """A host sync (``.item()``, ``.cpu()``, ``.numpy()``, ``print(tensor)``) on every step.

    Why: each one waits for the GPU to finish all queued work, so the CPU cannot run ahead
    and the GPU idles between steps; on small models this costs 10-30 % of throughput.
    Fix: keep running sums as tensors and read them under ``if step % log_every == 0``.
    Cannot see: whether the tensor is really on a GPU (it stays quiet in a file that never
    mentions one, and for batches straight from the loader) or how costly the model's step
    is next to the sync. A sync under ``if`` on a ``%`` test (or a flag set from one) or on
    elapsed time is periodic and not reported. Two more syncs are not reported: one on a failure path that leaves the
    loop (``if not math.isfinite(loss): print(...); sys.exit(1)`` runs at most once), and an
    action read back for an environment (``env.step(actions)`` needs host values); other
    syncs the algorithm needs every step are still reported. In a shared train/validate loop
    a sync on the branch opposite every backward (``else:`` of ``if is_train:``) is not a
    training step.
    """
    if not ctx.mentions_accelerator:
        return  # a CPU-only script: reading a value waits for nothing
    lines: set[int] = set()
    for call in ctx.calls:
        name = method(call)
        is_print = isinstance(call.func, ast.Name) and call.func.id == "print"
        if not (name in _SYNC_METHODS and not call.args) and not (is_print and _printed_tensor(call)):
            continue
        loop = _batch_loop(ctx, call)
        if loop is None or _periodic(ctx, call, loop) or call.lineno in lines:
            continue
        if not is_print and _fresh_from_loader(ctx, call):
            continue
        if _on_exit_path(ctx, call, loop) or _handed_to_environment(ctx, call, loop):
            continue
        if _on_the_branch_without_backward(ctx, call, loop):
            continue
        lines.add(call.lineno)
        what = "print() of a tensor" if is_print else f".{name}()"
        yield Hit(call, f"{what} on every training step forces a GPU->CPU sync")
