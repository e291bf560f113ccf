"""Rules about what a checkpoint holds: a whole pickled module (TW111), no optimizer state (TW119)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, keyword, method
from torchwise.lint.context import FileContext, position
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.evidence import unread, unread_reaching
from torchwise.lint.findings import Hit, Level, Unseen
from torchwise.lint.kinds import classify
from torchwise.lint.registry import rule
from torchwise.lint.rules.evaluation import optimized_models
from torchwise.lint.rules.resume_sites import in_resume


def _calls_to(ctx: FileContext, qualname: str) -> Iterator[ast.Call]:
    return (c for c in ctx.calls if ctx.qualname(c.func) == qualname)


@rule("TW111", Level.WARNING, hint="torch.save(model.state_dict(), path)")
def save_whole_module(ctx: FileContext) -> Iterator[Hit]:
    """``torch.save(model, ...)`` of a whole module instead of its ``state_dict()``.

    Why: pickling the module stores a reference to its class by import path; renaming or
    moving the file breaks loading, and loading needs ``weights_only=False`` (unsafe; the
    default ``torch.load`` of torch >= 2.6 refuses it).
    Fix: save ``model.state_dict()`` and rebuild the model before ``load_state_dict``.
    It follows the saved value: ``model.cpu()``, ``net.module``, ``model.to("cpu")``, a
    list ``[model, criterion, optimizer]``, a dict entry ``{"net": net.module if cuda else
    net}`` (literal, or a dict name filled in before the save).
    A name whose last value is a dict, a list or a ``state_dict()`` holds data, not a module
    (Beta-VAE's ``model_states = {"net": net.state_dict()}``).
    Cannot see: a module held under a name that does not look like one (``torch.save(g, f)``
    for a generator built elsewhere); it knows modules by their constructor or their name. A
    module only by its name, last made by code it cannot read, is info.
    """
    for call in _calls_to(ctx, "torch.save"):
        if not call.args:
            continue
        saved = call.args[0]
        entries = _saved_entries(ctx, saved) or []
        values = [saved, *(saved.elts if isinstance(saved, ast.List | ast.Tuple) else ()), *(v for _, v in entries)]
        module = next((m for v in values if (m := _whole_module(ctx, v)) is not None), None)
        if module is not None:
            yield Hit(call, f"torch.save of the whole module {ast.unparse(module)}", unseen=_made_unread(ctx, module))


def _made_unread(ctx: FileContext, module: ast.expr) -> tuple[Unseen, ...]:
    """A value that is a module only by its name, last made by code lint cannot read
    (``model = get_model_state(net)``): it may be a state dict. A value an optimizer here trains,
    or that the file switches to eval()/train() or moves in place, is a module whatever made it."""
    node = _unwrapped(module)
    name = dotted(node)
    values = [v for v in ctx.assignments.get(name or "", []) if isinstance(v, ast.Call)]
    if name is None or not values or name in ctx.trained or _moved_in_place(ctx, node):
        return ()
    if any(ctx.is_model_mode(c, m) and dotted(receiver_of(c)) == name for c in ctx.calls for m in ("eval", "train")):
        return ()
    who = unread(ctx, values[-1])
    built = ctx.constructor(node)
    if who is None or (built and classify(built_from=built, name="", module_classes=ctx.module_classes) == "model"):
        return ()
    return (Unseen(f"{who}(...), which made {name},", "returns a state dict, not a module"),)


# Calls and attributes that hand back the same module: model.cpu(), net.module, model.to(...).
_SAME_MODULE = frozenset({"cpu", "cuda", "to", "half", "float", "double", "bfloat16", "eval", "train", "module"})


def _whole_module(ctx: FileContext, value: ast.expr) -> ast.expr | None:
    """The module expression ``value`` evaluates to, or None when it is not a module."""
    if isinstance(value, ast.IfExp):
        return _whole_module(ctx, value.body) or _whole_module(ctx, value.orelse)
    node = _unwrapped(value)
    if not isinstance(node, ast.Name | ast.Attribute) or _holds_data(ctx, node):
        return None
    if ctx.kind(node) == "model" or _moved_in_place(ctx, node):
        return value
    return None


def _unwrapped(value: ast.expr) -> ast.expr:
    """The module under ``model.cpu()``, ``net.module``, ``model.to(...)``."""
    node = value
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SAME_MODULE:
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "module":
            node = node.value
        else:
            return node


def _moved_in_place(ctx: FileContext, node: ast.expr) -> bool:
    """``self.bert.to(self.device)`` as a statement of its own: a module moves in place, while a
    tensor's ``.to()`` returns a copy that such a statement would throw away (BERT-pytorch's
    trainer saves ``self.bert.cpu()`` and moves it back so)."""
    name = dotted(node)
    return any(
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and method(statement.value) in {"to", "cuda", "cpu"}
        and dotted(receiver_of(statement.value)) == name
        for statement in ctx.nodes
    )


_DATA_VALUES = ast.Dict | ast.List | ast.Tuple | ast.Set | ast.Constant | ast.JoinedStr | ast.DictComp | ast.ListComp


def _holds_data(ctx: FileContext, node: ast.expr) -> bool:
    """A name whose last value before ``node`` in its scope is a container or a state dict,
    not a module: Beta-VAE's ``model_states = {"net": self.net.state_dict()}``."""
    scope = ctx.scope_of(node)
    given = ctx.assignments.get(dotted(node) or "", [])
    values = [v for v in given if ctx.scope_of(v) is scope and position(v) < position(node)]
    if not values:
        return False
    last = values[-1]
    if isinstance(last, _DATA_VALUES):
        return True
    return isinstance(last, ast.Call) and (
        method(last) == "state_dict" or (dotted(last.func) or "").rsplit(".", 1)[-1] in {"dict", "OrderedDict"}
    )


def _label(key: ast.expr | None) -> str:
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else ""


def _saved_entries(ctx: FileContext, node: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """(key, value) pairs of a saved dict: a literal, ``dict(...)``, or a name built from
    one and filled in later with ``ckpt["optimizer"] = ...``; None if it is not a dict."""
    if isinstance(node, ast.Dict):
        return [(_label(k), v) for k, v in zip(node.keys, node.values, strict=True)]
    if isinstance(node, ast.Call) and dotted(node.func) == "dict" and not node.args:
        return [(k.arg or "", k.value) for k in node.keywords]
    name = dotted(node)
    scope = ctx.scope_of(node)
    # The name's last value before the save, in the same function: a `state_dict` dict built
    # in another function says nothing about this one.
    # In source order: ctx.assignments lists them as the tree is walked, outer blocks first
    # (DALLE-pytorch's save_model builds `save_obj` in an `if` and again after it).
    given = ctx.assignments.get(name or "", [])
    built = sorted((v for v in given if ctx.scope_of(v) is scope and position(v) < position(node)), key=position)
    entries = _saved_entries(ctx, built[-1]) if built and isinstance(built[-1], ast.Dict | ast.Call) else None
    if entries is None:
        return None
    for target in (n for n in ctx.walk(scope) if isinstance(n, ast.Subscript)):
        if isinstance(target.ctx, ast.Store) and dotted(target.value) == name:
            assigned = ctx.parents.get(target)
            if isinstance(assigned, ast.Assign):
                entries.append((_label(target.slice), assigned.value))
    return entries


def _mentions(ctx: FileContext, label: str, value: ast.expr, kind: str) -> bool:
    words = {"model": ("model", "net", "weights", "state_dict"), "optimizer": ("optim", "opt")}
    if isinstance(value, ast.Constant | ast.JoinedStr):
        return False  # a note where the weights would be (DALLE-pytorch's DeepSpeed aux file)
    if label.lower().startswith(words[kind]):
        return True
    return isinstance(value, ast.Call) and method(value) == "state_dict" and ctx.kind(receiver_of(value)) == kind


@rule("TW119", Level.WARNING, hint='add "optimizer": optimizer.state_dict() (and the scheduler\'s)')
def checkpoint_without_optimizer(ctx: FileContext) -> Iterator[Hit]:
    """A checkpoint dict with the model state but no optimizer state.

    Why: resuming from it restarts Adam's moments and the LR schedule from zero; the loss
    jumps and the run is not the run it claims to continue.
    Fix: save ``optimizer.state_dict()`` (and scheduler / scaler states) with the model.
    It reports only a file that resumes: one that loads saved weights back into a model it
    trains (whose parameters go to an optimizer built here), loads under a resume branch
    (``if args.resume:``, ``def load_checkpoint():``) or calls a resume helper.
    Cannot see: optimizers built in other files (it needs one built here), state saved by a
    second ``torch.save``, or dict keys built at run time. Plain SGD without momentum keeps no
    state and is not reported, nor is a file that never reads its checkpoints back (a model
    for inference, as in attention-is-all-you-need's ``model.chkpt`` for translate.py, or a
    distillation script that loads only its frozen teacher); a resume written in another
    script is missed.
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
    """
    builds_optimizer = any(ctx.kind(t) == "optimizer" for t in _assigned_names(ctx))
    if not builds_optimizer or _only_stateless_sgd(ctx) or not _resumes(ctx):
        return
    full = _full_checkpoint(ctx)
    for call in _calls_to(ctx, "torch.save"):
        entries = _saved_entries(ctx, call.args[0]) if call.args else None
        if entries is None:
            continue
        has_model = any(_mentions(ctx, k, v, "model") for k, v in entries)
        if not has_model or any(_mentions(ctx, k, v, "optimizer") for k, v in entries):
            continue
        if not any(_PROGRESS.search(k) or _PROGRESS.search(ast.unparse(v)) for k, v in entries):
            if full is not None:
                continue  # CondenseNet's converted model, beside the training checkpoint that holds the optimizer
            message = "checkpoint saves the model but not the optimizer state, nor where training was"
            yield Hit(call, f"{message}: a copy of the weights, unless a resume reads it", level=Level.INFO)
        else:
            yield Hit(call, "checkpoint saves the model but not the optimizer state", unseen=_saved_where_unread(ctx))


_SAVES = re.compile(r"save|checkpoint|dump|snapshot", re.I)


def _saved_where_unread(ctx: FileContext) -> tuple[Unseen, ...]:
    """A saving call of code lint cannot read that can reach the optimizer (``save_optimizer(opt,
    path)``, ``trainer.save_checkpoint(path)`` of a trainer built with it): the optimizer's state
    may be saved there, beside this file's checkpoint."""
    saving = [c for c in ctx.calls if _SAVES.search((dotted(c.func) or "").rsplit(".", 1)[-1])]
    return unread_reaching(ctx, saving, {"optimizer"}, "saves the optimizer's state")


# A checkpoint that records where training was: the epoch, step or iteration to resume from.
_PROGRESS = re.compile(r"epoch|step|iter", re.I)


def _full_checkpoint(ctx: FileContext) -> ast.Dict | None:
    """A dict literal of the file that holds both the model's and the optimizer's state (the
    training checkpoint handed to ``save_checkpoint(...)``): beside it, a dict of the weights
    alone is a copy for evaluation or deployment (CondenseNet's ``converted_`` model)."""
    for node in ctx.nodes:
        if isinstance(node, ast.Dict):
            entries = [(_label(k), v) for k, v in zip(node.keys, node.values, strict=True)]
            if any(_mentions(ctx, k, v, "model") for k, v in entries) and any(
                _mentions(ctx, k, v, "optimizer") for k, v in entries
            ):
                return node
    return None


_RESUME_HELPERS = re.compile(r"load_checkpoint|resume|restore|from_checkpoint")


def _resumes(ctx: FileContext) -> bool:
    """Whether the file reads saved training state back into what it trains: a resume
    helper (``load_checkpoint(...)``), a load under a resume branch, or weights loaded into a
    model whose parameters an optimizer built here updates. Loading a frozen teacher or a
    pretrained backbone that is not trained is not a resume (RepDistiller's train_student.py
    loads only its teacher)."""
    trained = optimized_models(ctx)
    for call in ctx.calls:
        if _RESUME_HELPERS.search(method(call) or dotted(call.func) or ""):
            return True
        load = ctx.qualname(call.func) == "torch.load" or method(call) in {"load_state_dict", "load_weights"}
        if not load:
            continue
        if in_resume(ctx, call) or (method(call) == "load_state_dict" and ctx.kind(receiver_of(call)) == "optimizer"):
            return True  # under `if args.resume:`, or the optimizer itself comes back
        into = _loaded_into(ctx, call)
        if into is not None and any(into == t or into.startswith(f"{t}.") or t.startswith(f"{into}.") for t in trained):
            return True
    return False


def _loaded_into(ctx: FileContext, call: ast.Call) -> str | None:
    """The name a load restores: ``model`` of ``model.load_state_dict(...)`` (``model.module``
    reads as ``model``) or of ``model = torch.load(f)``."""
    if method(call) in {"load_state_dict", "load_weights"}:
        name = dotted(receiver_of(call)) or ""
        return name.removesuffix(".module") or None
    statement = ctx.statement(call)
    if isinstance(statement, ast.Assign) and statement.value is call:
        return next((d for t in statement.targets if (d := dotted(t))), None)
    return None


def _assigned_names(ctx: FileContext) -> Iterator[ast.expr]:
    for node in ctx.nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            yield from (t for t in node.targets if isinstance(t, ast.Name | ast.Attribute))


def _only_stateless_sgd(ctx: FileContext) -> bool:
    """Every optimizer built here is ``SGD`` without momentum: nothing to lose on resume."""
    built = [
        c
        for c in ctx.calls
        if (ctx.qualname(c.func) or "").startswith("torch.optim.")
        and (ctx.qualname(c.func) or "").rsplit(".", 1)[-1][:1].isupper()
        and "lr_scheduler" not in (ctx.qualname(c.func) or "")
    ]
    return bool(built) and all(
        (ctx.qualname(c.func) or "").endswith(".SGD") and _no_momentum(keyword(c, "momentum")) for c in built
    )


def _no_momentum(value: ast.expr | None) -> bool:
    return value is None or (isinstance(value, ast.Constant) and value.value in (0, 0.0))
