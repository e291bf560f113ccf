"""Rules about saving and loading: torch.load safety, whole-module pickles, resumable state."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.context import FileContext, dotted, is_constant, keyword, method, position
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.findings import Edit, Hit, Level
from torchwise.lint.registry import rule


def _calls_to(ctx: FileContext, qualname: str) -> Iterator[ast.Call]:
    return (c for c in ctx.calls if ctx.qualname(c.func) == qualname)


@rule(
    "TW110",
    Level.INFO,
    hint='pass map_location="cpu" (or the target device) and keep weights_only=True',
)
def unsafe_torch_load(ctx: FileContext) -> Iterator[Hit]:
    """``torch.load`` with ``weights_only=False`` (error) or without ``map_location`` (info).

    Why: ``weights_only=False`` unpickles arbitrary code from the file: loading a
    downloaded checkpoint can run anything. Without ``map_location`` tensors go back to the
    device they were saved from, which fails on a CPU-only machine or piles every rank's
    copy onto GPU 0.
    Fix: ``torch.load(path, map_location="cpu", weights_only=True)``.
    """
    for call in _calls_to(ctx, "torch.load"):
        if is_constant(keyword(call, "weights_only"), False):
            yield Hit(
                call,
                "torch.load(weights_only=False) runs arbitrary pickled code",
                level=Level.ERROR,
                hint="load with weights_only=True; save state_dicts, not objects",
            )
            continue
        if keyword(call, "map_location") is not None or len(call.args) >= 2:
            continue
        if any(k.arg is None for k in call.keywords):
            continue  # **kwargs may carry it
        last = max([*call.args, *call.keywords], key=position, default=None)
        edits = ()
        if last is not None and last.end_lineno is not None:
            at = (last.end_lineno, last.end_col_offset or 0)
            edits = (Edit.insert(at, ', map_location="cpu"'),)
        yield Hit(
            call,
            "torch.load without map_location loads onto the device it was saved from",
            edits=edits,
        )


@rule("TW111", Level.WARNING, hint="torch.save(model.state_dict(), path)")
def save_whole_module(ctx: FileContext) -> Iterator[Hit]:
    """``torch.save(model, ...)`` of a whole module instead of its ``state_dict()``.

    Why: pickling the module stores a reference to its class by import path; renaming or
    moving the file breaks loading, and loading needs ``weights_only=False`` (unsafe).
    Fix: save ``model.state_dict()`` and rebuild the model before ``load_state_dict``.
    """
    for call in _calls_to(ctx, "torch.save"):
        if call.args and isinstance(call.args[0], ast.Name | ast.Attribute):
            if ctx.kind(call.args[0]) == "model":
                yield Hit(call, f"torch.save of the whole module {ast.unparse(call.args[0])}")


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
    built = ctx.assignments.get(name or "", [])
    entries = next(
        (
            e
            for v in reversed(built)
            if isinstance(v, ast.Dict | ast.Call) and (e := _saved_entries(ctx, v)) is not None
        ),
        None,
    )
    if entries is None:
        return None
    for target in (n for n in ctx.nodes if isinstance(n, ast.Subscript)):
        if isinstance(target.ctx, ast.Store) and dotted(target.value) == name:
            assigned = ctx.parents.get(target)
            if isinstance(assigned, ast.Assign):
                entries.append((_label(target.slice), assigned.value))
    return entries


def _mentions(ctx: FileContext, label: str, value: ast.expr, kind: str) -> bool:
    words = {"model": ("model", "net", "weights", "state_dict"), "optimizer": ("optim", "opt")}
    if label.lower().startswith(words[kind]):
        return True
    return (
        isinstance(value, ast.Call)
        and method(value) == "state_dict"
        and ctx.kind(receiver_of(value)) == kind
    )


@rule("TW119", Level.WARNING, hint='add "optimizer": optimizer.state_dict() (and the scheduler\'s)')
def checkpoint_without_optimizer(ctx: FileContext) -> Iterator[Hit]:
    """A checkpoint dict with the model state but no optimizer state.

    Why: resuming from it restarts Adam's moments and the LR schedule from zero; the loss
    jumps and the run is not the run it claims to continue.
    Fix: save ``optimizer.state_dict()`` (and scheduler / scaler states) with the model.
    """
    builds_optimizer = any(ctx.kind(t) == "optimizer" for t in _assigned_names(ctx))
    if not builds_optimizer:
        return
    for call in _calls_to(ctx, "torch.save"):
        entries = _saved_entries(ctx, call.args[0]) if call.args else None
        if entries is None:
            continue
        has_model = any(_mentions(ctx, k, v, "model") for k, v in entries)
        if has_model and not any(_mentions(ctx, k, v, "optimizer") for k, v in entries):
            yield Hit(call, "checkpoint saves the model but not the optimizer state")


def _assigned_names(ctx: FileContext) -> Iterator[ast.expr]:
    for node in ctx.nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            yield from (t for t in node.targets if isinstance(t, ast.Name | ast.Attribute))
