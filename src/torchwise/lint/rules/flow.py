"""Rules that follow values through a script: a 0-dim loss indexed (TW129), an iterator run past its end (TW130).

>>> from torchwise.lint.engine import lint_source
>>> src = "import torch\\nloss = criterion(out, y)\\nprint(loss.data[0])\\n"
>>> [f.code for f in lint_source(src)]
['TW129']
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, method
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.endless import endless_loader, endless_unread

_LOSS_WORDS = re.compile(r"loss|criterion|cost", re.I)
_VERSION_WORDS = re.compile(r"version", re.I)


def _version_guarded(ctx: FileContext, node: ast.AST) -> bool:
    """Inside an ``if`` that tests the torch version: the legacy branch of code that runs on both."""
    return any(isinstance(a, ast.If) and _VERSION_WORDS.search(ast.unparse(a.test)) for a in ctx.ancestors(node))


# torch.nn.functional's losses: 0-dim unless reduction="none" (or reduce=False) is passed.
_FUNCTIONAL_LOSSES = frozenset(
    "cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy "
    "binary_cross_entropy_with_logits kl_div poisson_nll_loss gaussian_nll_loss margin_ranking_loss "
    "hinge_embedding_loss soft_margin_loss multilabel_soft_margin_loss multi_margin_loss "
    "cosine_embedding_loss triplet_margin_loss ctc_loss".split()
)


def _functional_loss(ctx: FileContext, node: ast.expr) -> bool:
    """``F.cross_entropy(out, y, size_average=False)`` written inline (pytorch-playground)."""
    if not isinstance(node, ast.Call):
        return False
    name = ctx.qualname(node.func) or ""
    if not (name.startswith("torch.nn.functional.") and name.rsplit(".", 1)[-1] in _FUNCTIONAL_LOSSES):
        return False
    unreduced = any(
        (k.arg == "reduction" and isinstance(k.value, ast.Constant) and k.value.value == "none")
        or (k.arg == "reduce" and isinstance(k.value, ast.Constant) and k.value.value is False)
        for k in node.keywords
    )
    return not unreduced


def _loss_module_call(ctx: FileContext, node: ast.expr) -> bool:
    """``evaluateL2(output, y)`` where ``evaluateL2 = nn.MSELoss(size_average=False)`` (LSTNet's
    main.py): a loss module called returns a 0-dim tensor unless it was built with
    ``reduction="none"`` / ``reduce=False``."""
    if not isinstance(node, ast.Call):
        return False
    given = ctx.assignments.get(dotted(node.func) or "", [])
    # `evaluateL2 = evaluateL2.cuda()` moves the module; the constructor is the value that builds it.
    built = [v for v in given if isinstance(v, ast.Call) and method(v) not in {"cuda", "to", "cpu"}]
    if not built:
        return False
    call = built[-1]
    name = ctx.qualname(call.func) or ""
    unreduced = any(
        (k.arg == "reduction" and not (isinstance(k.value, ast.Constant) and k.value.value in ("mean", "sum")))
        or (k.arg == "reduce" and not is_constant(k.value, True))
        for k in call.keywords
    )
    return name.startswith("torch.nn.") and name.endswith("Loss") and not unreduced


def _is_loss(ctx: FileContext, node: ast.expr) -> bool:
    """A value that is a scalar loss: named like one, built by a loss call, or a reduction."""
    text = ast.unparse(node)
    if _LOSS_WORDS.search(text) or _functional_loss(ctx, node) or _loss_module_call(ctx, node):
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
    It knows a loss by its name (loss, criterion, cost), by the call that built it (a loss
    function, ``.mean()``, ``.sum()``) or by a functional loss written inline
    (``F.cross_entropy(out, y).data[0]``, unless ``reduction="none"``); a branch under an ``if``
    on the torch version is left alone (the old path of code that supports both). A running sum
    that starts at a number and only ever has losses added (``total += loss.data``) is 0-dim too,
    and ``total[0]`` is reported (AttnGAN's pretrain_DAMSM.py). Files that
    also call ``.cuda(async=True)`` are read too (TW135).
    Cannot see: a 0-dim value with another name built elsewhere (``t.data[0]`` for an element
    of a 1-D tensor is not reported, nor ``score.data[0]`` of ``score = correct.sum(0).mul(k)``,
    whose shape depends on the input's).
    """
    for node in ctx.nodes:
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)):
            continue
        if node.value.attr != "data" or not (isinstance(node.slice, ast.Constant) and node.slice.value == 0):
            continue
        if _is_loss(ctx, node.value.value) and not _version_guarded(ctx, node):
            yield Hit(node, f"{ast.unparse(node)}: a loss is 0-dim, so index 0 raises IndexError")
    for node in ctx.nodes:
        if _indexed_loss_sum(ctx, node) and not _version_guarded(ctx, node):
            what = f"{ast.unparse(node)}: {ast.unparse(node.value)} sums 0-dim losses"  # type: ignore[attr-defined]
            yield Hit(node, f"{what} (a 0-dim tensor itself), so index 0 raises IndexError")


def _indexed_loss_sum(ctx: FileContext, node: ast.AST) -> bool:
    """``total[0]`` where ``total`` starts at a number and only ever has losses added to it
    (``total += loss.data``: AttnGAN's pretrain_DAMSM.py): torch 0.3's 1-element sum is 0-dim now."""
    if not (isinstance(node, ast.Subscript) and is_constant(node.slice, 0)):
        return False
    name = dotted(node.value)
    if name is None or isinstance(node.value, ast.Attribute) and node.value.attr == "data":
        return False  # `x.data[0]` is the rule above's
    added, started = [], False
    for other in ctx.walk(ctx.scope_of(node)):
        if isinstance(other, ast.AugAssign) and dotted(other.target) == name:
            added.append(other)
        elif isinstance(other, ast.Assign | ast.AnnAssign) and any(
            dotted(t) == name for t in (other.targets if isinstance(other, ast.Assign) else [other.target])
        ):
            value = other.value
            if not (isinstance(value, ast.Constant) and type(value.value) in (int, float)):
                return False
            started = True
    return started and bool(added) and all(
        isinstance(a.op, ast.Add) and _tensor_value(a.value) and _is_loss(ctx, _without_data(a.value)) for a in added
    )


def _tensor_value(node: ast.expr) -> bool:
    """A value that stays a tensor: ``loss.data``, ``loss``, ``a + b``; not ``loss.item()``."""
    if isinstance(node, ast.BinOp):  # `len(data) * loss.data` is a tensor; `n * loss.item()` is not
        sides = (node.left, node.right)
        return any(_tensor_value(x) for x in sides) and not any(_detached(x) for x in sides)
    return isinstance(node, ast.Name | ast.Attribute) or (isinstance(node, ast.Call) and method(node) == "detach")


def _detached(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and (method(node) in {"item", "tolist", "numpy"} or dotted(node.func) == "float")


def _without_data(node: ast.expr) -> ast.expr:
    """``loss`` of ``loss.data`` / ``(a + b).data``."""
    return node.value if isinstance(node, ast.Attribute) and node.attr == "data" else node


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
    A loop that runs as many times as the loader has batches is fine: ``range(len(loader))``,
    ``range(n)`` with ``n = min(k, len(loader))``, or ``range(n)`` with ``n = len(...)`` over a
    loader of ``batch_size=1``. A loader whose sampler is a class of this file with an endless
    ``__iter__`` (a ``while True`` generator) never runs out.
    Cannot see: an iterator over something that is not a loader by its constructor or name,
    or one re-created in another function; a step count equal to the number of batches that
    it cannot prove (it then reports it); ``next(iter(loader))`` (one batch) is fine.
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
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
        if isinstance(outer, ast.For) and _one_pass(ctx, outer.iter, made[name][0].args[0]):
            continue  # as many steps as the loader has batches
        if endless_loader(ctx, made[name][0].args[0]):
            continue  # its sampler never ends: neither does the iterator
        message = f"next({name}) runs past the end of iter(...) made once: StopIteration after one epoch"
        yield Hit(call, message, unseen=endless_unread(ctx, made[name][0].args[0]))


def _capped_by_len(value: ast.expr, loader: ast.expr) -> bool:
    """``min(n, len(loader))`` (or ``len(loader)`` itself): never more steps than batches."""
    if isinstance(value, ast.Call) and dotted(value.func) == "min":
        return any(_capped_by_len(a, loader) for a in value.args)
    return (
        isinstance(value, ast.Call)
        and dotted(value.func) == "len"
        and bool(value.args)
        and dotted(value.args[0]) == dotted(loader)
    )


def _one_pass(ctx: FileContext, steps: ast.expr, loader: ast.expr) -> bool:
    """``range(len(loader))``, or ``range(n)`` with ``n = len(...)`` over a loader of
    ``batch_size=1``: the loop counts the loader's batches (jwyang's faster-rcnn test_net.py
    steps ``num_images = len(imdb.image_index)`` times through a one-image loader)."""
    if not (isinstance(steps, ast.Call) and dotted(steps.func) == "range" and len(steps.args) == 1):
        return False
    bound = steps.args[0]
    values = ctx.assignments.get(dotted(bound) or "", []) if isinstance(bound, ast.Name) else [bound]
    if values and _capped_by_len(values[-1], loader):
        return True  # pycls' benchmark: total_iter = min(total_iter, len(data_loader))
    if len(values) != 1 or not (isinstance(values[0], ast.Call) and dotted(values[0].func) == "len"):
        return False
    counted = values[0].args[0] if values[0].args else None
    if counted is not None and dotted(counted) == dotted(loader):
        return True
    built = [v for v in ctx.assignments.get(dotted(loader) or "", []) if isinstance(v, ast.Call)]
    return bool(built) and any(
        k.arg == "batch_size" and isinstance(k.value, ast.Constant) and k.value.value == 1 for k in built[-1].keywords
    )
