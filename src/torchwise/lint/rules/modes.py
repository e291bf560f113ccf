"""Which models behave the same in train and eval mode: built from layers without dropout or
batch statistics (TW103 and TW124 need not ask for ``model.eval()`` there), and the mode a call
leaves the model in."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from torchwise.lint.ast_names import dotted, is_constant, keyword
from torchwise.lint.context import FileContext, position
from torchwise.lint.findings import Hit, Unseen

# Layers whose output does not depend on train/eval mode (no dropout, no batch statistics).
_MODE_DEPENDENT = re.compile(r"Dropout|BatchNorm|InstanceNorm|Transformer|RReLU|dropout|batch_norm")


def mode_of_call(ctx: FileContext, call: ast.Call) -> str | None:
    """The mode a call leaves the model in: direct ``eval()``/``train()``, or via a local helper."""
    direct = direct_mode(ctx, call)
    if direct is not None:
        return direct
    target = ctx.callee(call)
    if target is None:
        return None
    modes = [m for c in ctx.reached_calls(target, 1) if (m := direct_mode(ctx, c))]
    return modes[-1] if modes else None


def direct_mode(ctx: FileContext, call: ast.Call) -> str | None:
    return next((m for m in ("eval", "train") if ctx.is_model_mode(call, m)), None)


def mode_switches(ctx: FileContext, scope: ast.AST, node: ast.AST) -> list[tuple[str, ast.Call]]:
    return [
        (mode, call)
        for call in ctx.calls_in(scope)
        if position(call) < position(node) and (mode := mode_of_call(ctx, call))
    ]


def last_mode_before(ctx: FileContext, scope: ast.AST, node: ast.AST) -> str | None:
    """The mode the last ``eval()``/``train()`` before ``node`` in ``scope`` left the model in."""
    switches = mode_switches(ctx, scope, node)
    return switches[-1][0] if switches else None


def mode_free(ctx: FileContext, model: ast.expr) -> bool:
    """Whether a model is built here from layers that behave the same in train and eval mode
    (``nn.Linear``, a local class of convolutions and ReLUs); False when it cannot tell."""
    return mode_of(ctx, model) is False


def mode_dependent(ctx: FileContext, model: ast.expr) -> bool:
    """Whether this file (or a module beside it) shows the model has dropout or batch statistics:
    a layer of them, a ``self.training`` test, or a model zoo's network (torchvision, timm,
    transformers), whose networks have them."""
    return mode_of(ctx, model) is True


def mode_hit(
    ctx: FileContext, node: ast.AST, models: list[ast.expr], message: str, unseen: tuple[Unseen, ...] = ()
) -> Hit:
    """A warning where the file shows a model with dropout or batch norm and nothing lint cannot
    read could switch it (``unseen``); info otherwise."""
    if not any(mode_dependent(ctx, m) for m in models):
        unseen = (Unseen("its layers, defined outside this file,", "have neither dropout nor batch norm"), *unseen)
    return Hit(node, message, unseen=unseen)


def mode_of(ctx: FileContext, model: ast.expr) -> bool | None:
    """True: ``model.eval()`` changes what it computes; False: it does not; None: its layers
    are defined where this file cannot read them (an import from a package, a parameter)."""
    built = ctx.constructor(model)
    if built is None:
        return _zoo_subscript(ctx, model)
    if built == "torch.nn.Sequential":  # nn.Sequential(nn.Linear(1, 10), nn.ReLU(), ...): its layers decide
        made = [v for v in ctx.assignments.get(dotted(model) or "", []) if isinstance(v, ast.Call)]
        layers = made[-1].args if made else []
        if not layers or not all(isinstance(a, ast.Call) for a in layers):
            return None
        return _combine(_layer_mode(ctx, a) for a in layers if isinstance(a, ast.Call))
    return _class_mode(ctx, built, set())


def _layer_mode(ctx: FileContext, layer: ast.Call) -> bool | None:
    return False if _batch_statistics_only(ctx, layer) else _class_mode(ctx, ctx.qualname(layer.func) or "", set())


def _batch_statistics_only(ctx: FileContext, call: ast.Call) -> bool:
    """A batch norm that keeps no running statistics worth switching to: built with
    ``track_running_stats=False`` (eval mode normalises with the batch's statistics too) or with
    ``momentum=1`` (its running statistics are the last batch's alone). Normalising each batch by
    its own statistics is then the method: LearningToCompare's relation networks run their test
    episodes in train mode on purpose."""
    if "BatchNorm" not in (ctx.qualname(call.func) or ""):
        return False
    momentum = keyword(call, "momentum")
    one = isinstance(momentum, ast.Constant) and not isinstance(momentum.value, bool) and momentum.value == 1
    return one or is_constant(keyword(call, "track_running_stats"), False)


# Containers whose layers are the calls written inside them: they add nothing of their own.
_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})


_MOVES = {"to", "cuda", "cpu", "eval"}

# Model zoos whose networks (ResNets, VGGs, ViTs, BERTs) have batch norm or dropout.
_ZOOS = ("torchvision.models", "timm", "transformers")


def _zoo_subscript(ctx: FileContext, model: ast.expr) -> bool | None:
    """``models.__dict__[args.arch](...)`` with ``models`` torchvision's zoo: mode-dependent."""
    for value in reversed(ctx.assignments.get(dotted(model) or "", [])):
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _MOVES:
            value = value.func.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Subscript):
            return True if (ctx.qualname(value.func.value) or "").startswith(_ZOOS) else None
        if isinstance(value, ast.Call):
            return None
    return None


def _combine(modes: Iterable[bool | None]) -> bool | None:
    """Dependent if any part is; mode-free only if every part is known to be."""
    seen = list(modes)
    if any(m is True for m in seen):
        return True
    return None if any(m is None for m in seen) else False


def _sibling_module(ctx: FileContext, module: str) -> FileContext | None:
    """``model`` of ``from model import Net``, parsed from ``model.py`` beside this file (the
    usual train.py + model.py layout); None when there is no such file or it does not parse."""
    if ctx.path.startswith("<"):
        return None
    candidate = Path(ctx.path).parent / f"{module.replace('.', '/')}.py"

    def parse() -> FileContext | None:
        try:
            return FileContext.parse(candidate.read_text(encoding="utf-8"), str(candidate))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            return None

    return ctx.memo(("sibling", module), parse) if candidate.is_file() else None


def _class_mode(ctx: FileContext, built: str, seen: set[str]) -> bool | None:
    last = built.rsplit(".", 1)[-1]
    if built.startswith("torch.nn.") and last != "Sequential":
        return bool(_MODE_DEPENDENT.search(last))
    if built.startswith(_ZOOS):
        return True
    classes = {n.name: n for n in ctx.nodes if isinstance(n, ast.ClassDef)}
    if last not in classes and "." in built:
        sibling = _sibling_module(ctx, built.rsplit(".", 1)[0])
        return None if sibling is None else _class_mode(sibling, last, seen)
    if last in seen:
        return False  # a cycle adds nothing
    if last not in classes:
        return None
    seen.add(last)
    body = classes[last]
    if any(isinstance(n, ast.Attribute) and n.attr == "training" for n in ast.walk(body)):
        return True
    parts: list[bool | None] = []
    for call in (n for n in ast.walk(body) if isinstance(n, ast.Call)):
        name = ctx.qualname(call.func) or ""
        if _batch_statistics_only(ctx, call) or name in _CONTAINERS:
            continue  # a container's layers are walked themselves
        if _MODE_DEPENDENT.search(name) or any(_MODE_DEPENDENT.search(k.arg or "") for k in call.keywords):
            return True
        tail = name.rsplit(".", 1)[-1]
        if tail[:1].isupper() and tail != "super":
            parts.append(_class_mode(ctx, name, seen))
    return _combine(parts)
