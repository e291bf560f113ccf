"""Which models behave the same in train and eval mode: built from layers without dropout or
batch statistics (TW103 and TW124 need not ask for ``model.eval()`` there)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from torchwise.lint.context import FileContext, dotted

# Layers whose output does not depend on train/eval mode (no dropout, no batch statistics).
_MODE_DEPENDENT = re.compile(r"Dropout|BatchNorm|InstanceNorm|Transformer|RReLU|dropout|batch_norm")


def mode_free(ctx: FileContext, model: ast.expr) -> bool:
    """Whether a model is built here from layers that behave the same in train and eval mode
    (``nn.Linear``, a local class of convolutions and ReLUs); False when it cannot tell."""
    built = ctx.constructor(model)
    if built is None:
        return False
    if built == "torch.nn.Sequential":  # nn.Sequential(nn.Linear(1, 10), nn.ReLU(), ...): its layers decide
        made = [v for v in ctx.assignments.get(dotted(model) or "", []) if isinstance(v, ast.Call)]
        layers = made[-1].args if made else []
        return bool(layers) and all(
            isinstance(a, ast.Call) and _mode_free_class(ctx, ctx.qualname(a.func) or "", set()) for a in layers
        )
    return _mode_free_class(ctx, built, set())


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


def _mode_free_class(ctx: FileContext, built: str, seen: set[str]) -> bool:
    last = built.rsplit(".", 1)[-1]
    if built.startswith("torch.nn.") and last != "Sequential":
        return not _MODE_DEPENDENT.search(last)
    classes = {n.name: n for n in ctx.nodes if isinstance(n, ast.ClassDef)}
    if last not in classes and "." in built:
        sibling = _sibling_module(ctx, built.rsplit(".", 1)[0])
        return sibling is not None and _mode_free_class(sibling, last, seen)
    if last not in classes or last in seen:
        return False
    seen.add(last)
    body = classes[last]
    if any(isinstance(n, ast.Attribute) and n.attr == "training" for n in ast.walk(body)):
        return False
    for call in (n for n in ast.walk(body) if isinstance(n, ast.Call)):
        name = ctx.qualname(call.func) or ""
        if _MODE_DEPENDENT.search(name) or any(_MODE_DEPENDENT.search(k.arg or "") for k in call.keywords):
            return False
        tail = name.rsplit(".", 1)[-1]
        if tail[:1].isupper() and tail != "super" and not _mode_free_class(ctx, name, seen):
            return False
    return True
