"""Rules about saving and loading: torch.load safety, whole-module pickles, resumable state."""

from __future__ import annotations

import ast
import re
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
    """``torch.load`` with ``weights_only=False`` (warning) or without ``map_location`` (info).

    Why: ``weights_only=False`` unpickles arbitrary code from the file: loading a
    downloaded checkpoint can run anything. Without ``map_location`` tensors go back to the
    device they were saved from, which fails on a CPU-only machine or piles every rank's
    copy onto GPU 0.
    Fix: ``torch.load(path, map_location="cpu", weights_only=True)``.
    Cannot see: where the file was saved. It stays quiet for a path this file saved earlier
    in the same run (reloaded on the device that wrote it; a formatted name counts by its
    template, ``"{}.pkl".format(epoch)``) or only ever saves non-weights
    (a cache of host tensors), and, in a script that never mentions a GPU, for
    loads that are not weights (data tensors made on the CPU); a checkpoint written by
    another script is assumed to come from a GPU.
    """
    for call in _calls_to(ctx, "torch.load"):
        if is_constant(keyword(call, "weights_only"), False):
            yield Hit(
                call,
                "torch.load(weights_only=False) runs arbitrary pickled code",
                level=Level.WARNING,
                hint="only for files you trust; save state_dicts and load with weights_only=True",
            )
            continue
        if keyword(call, "map_location") is not None or len(call.args) >= 2:
            continue
        if any(k.arg is None for k in call.keywords):
            continue  # **kwargs may carry it
        if _saved_here(ctx, call):
            continue  # a file this script writes itself, on the device it runs on
        if not ctx.mentions_accelerator and not _loads_weights(ctx, call):
            continue  # data tensors in a CPU-only script
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


# Calls that only a module answers: the loaded object is a whole nn.Module.
_MODULE_METHODS = frozenset(
    "eval train parameters named_parameters modules children forward generate state_dict "
    "load_state_dict zero_grad".split()
)


_WEIGHT_NAMES = re.compile(r"ckpt|checkpoint|state|^sd$|_sd$|weights|model|snapshot|params", re.I)


def _loads_weights(ctx: FileContext, load: ast.Call) -> bool:
    """``m.load_state_dict(torch.load(f))`` or ``checkpoint = torch.load(f)``."""
    parent = ctx.parents.get(load)
    if isinstance(parent, ast.Call) and method(parent) == "load_state_dict":
        return True
    statement = ctx.statement(load)
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    return any(_WEIGHT_NAMES.search(dotted(t) or "") for t in targets)


def _file_argument(call: ast.Call) -> ast.expr | None:
    """The file of ``torch.load(f)`` (first argument) / ``torch.save(obj, f)`` (second)."""
    index = 1 if (dotted(call.func) or "").endswith("save") else 0
    value = keyword(call, "f")
    if value is None and len(call.args) > index:
        value = call.args[index]
    return value


def _path_text(ctx: FileContext, node: ast.expr | None) -> str | None:
    """The path a file argument names: ``f`` bound by ``with open(path) as f`` reads as path,
    and a formatted name reads as its template (``'{}.pkl'.format(epoch)`` and
    ``'{}.pkl'.format(best_epoch)`` name files of one family)."""
    if node is None:
        return None
    if isinstance(node, ast.Name):
        for ancestor in ctx.ancestors(node):
            if isinstance(ancestor, ast.With):
                for item in ancestor.items:
                    opened = item.context_expr
                    if dotted(item.optional_vars) == node.id and isinstance(opened, ast.Call) and opened.args:
                        return _template(opened.args[0])
    return _template(node)


def _template(node: ast.expr) -> str:
    """The path with the values formatted into it left out: ``f"{d}/{epoch}.pt"`` and
    ``"%d.pt" % epoch`` read as their constant text."""
    if isinstance(node, ast.JoinedStr):
        return "f" + repr("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
    if isinstance(node, ast.Call) and method(node) == "format" and _is_str(receiver_of(node)):
        return ast.unparse(receiver_of(node)) + ".format"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_str(node.left):
        return ast.unparse(node.left) + " %"
    if isinstance(node, ast.Call) and (dotted(node.func) or "").endswith("path.join"):
        return "join(" + ", ".join(_template(a) for a in node.args) + ")"
    return ast.unparse(node)


def _is_str(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _saves(ctx: FileContext) -> list[tuple[ast.Call, str | None]]:
    return ctx.memo("saves", lambda: [(c, _path_text(ctx, _file_argument(c))) for c in _calls_to(ctx, "torch.save")])


def _saved_here(ctx: FileContext, load: ast.Call) -> bool:
    """A path this file writes: earlier in the same run (reloaded on the device that wrote
    it), or only ever with tensors that are not weights (a cache of host data)."""
    path = _path_text(ctx, _file_argument(load))
    saves = [save for save, saved in _saves(ctx) if path is not None and saved == path]
    if any(position(save) < position(load) for save in saves):
        return True
    return bool(saves) and not any(_saves_weights(ctx, save) for save in saves)


def _saves_weights(ctx: FileContext, save: ast.Call) -> bool:
    obj = save.args[0] if save.args else keyword(save, "obj")
    if obj is None:
        return True
    return any(
        _WEIGHT_NAMES.search((dotted(n) or "").rsplit(".", 1)[-1]) or ctx.kind(n) == "model"
        for n in ast.walk(obj)
        if isinstance(n, ast.Name | ast.Attribute)
    )


def _whole_module_saved_to(ctx: FileContext, load: ast.Call) -> ast.Call | None:
    path = _path_text(ctx, _file_argument(load))
    for save, saved in _saves(ctx):
        obj = save.args[0] if save.args else keyword(save, "obj")
        if saved == path and obj is not None and ctx.kind(obj) == "model":
            return save
    return None


def _used_as_module(ctx: FileContext, load: ast.Call) -> str | None:
    """How the loaded object is used as a module: ``torch.load(p).eval()``, or a name it is
    assigned to (or an entry of it: ``model = ckpt["model"]``) that is called or asked for
    ``.parameters()``; None if never."""
    parent = ctx.parents.get(load)
    if isinstance(parent, ast.Attribute) and parent.attr in _MODULE_METHODS:
        return f".{parent.attr}()"
    statement = ctx.statement(load)
    if not isinstance(statement, ast.Assign) or statement.value is not load:
        return None
    names = {dotted(t) for t in statement.targets} - {None}
    scope = ctx.scope_of(load)
    for node in ctx.walk(scope):
        # `model = checkpoint["model"]`: an entry of the loaded dict (sgrvinod's SSD tutorial)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript):
            if dotted(node.value.value) in names and position(node) > position(load):
                names |= {dotted(t) for t in node.targets} - {None}
    for call in _calls_reading(ctx, scope, names):
        if position(call) <= position(load):
            continue
        if dotted(call.func) in names:
            return f"{dotted(call.func)}(...)"
        if method(call) in _MODULE_METHODS and dotted(receiver_of(call)) in names:
            return f"{dotted(receiver_of(call))}.{method(call)}()"
    return None


def _calls_reading(ctx: FileContext, scope: ast.AST, names: set[str | None]) -> list[ast.Call]:
    """The calls in ``scope``; for a module-level load, also those in functions that read the
    loaded name as a global (transformer-xl's eval.py loads ``model`` at the top and calls
    ``model.eval()`` inside ``evaluate()``)."""
    calls = list(ctx.calls_in(scope))
    if not isinstance(scope, ast.Module):
        return calls
    for function in ctx.functions.values():
        bound = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
        if not names & bound:
            calls += [c for c in ctx.calls_in(function) if c not in calls]
    return calls


def _under_safe_globals(ctx: FileContext, node: ast.AST) -> bool:
    """Inside ``with torch.serialization.safe_globals([...]):``."""
    return any(
        isinstance(a, ast.With)
        and any(
            (ctx.qualname(i.context_expr.func) or "").endswith("safe_globals")
            for i in a.items
            if isinstance(i.context_expr, ast.Call)
        )
        for a in ctx.ancestors(node)
    )


@rule(
    "TW125",
    Level.WARNING,
    hint="save model.state_dict() and load it into a rebuilt model; for a file you trust: "
    "torch.load(path, weights_only=False)",
)
def load_of_pickled_object(ctx: FileContext) -> Iterator[Hit]:
    """``torch.load`` of a whole pickled module, which ``weights_only=True`` cannot load.

    Why: since torch 2.6 ``torch.load`` defaults to ``weights_only=True``: it loads tensors,
    state dicts and plain containers, and refuses any other pickled object with "Weights
    only load failed ... Unsupported global". A model saved whole (``torch.save(model, f)``)
    no longer loads; older tutorials and checkpoints break on upgrade.
    Fix: save ``model.state_dict()`` and ``model.load_state_dict(torch.load(f,
    weights_only=True))`` into a freshly built model; only for a file you trust,
    ``torch.load(f, weights_only=False)``.
    A module-level load is followed into the functions that read it as a global.
    Cannot see: pickled objects other than modules (numpy arrays, argparse Namespaces,
    custom classes) unless the result is used as a module, or files saved by other scripts.
    Loads under ``torch.serialization.safe_globals`` / after ``add_safe_globals`` are fine.
    """
    allowlisted = any((ctx.qualname(c.func) or "").endswith("add_safe_globals") for c in ctx.calls)
    for load in _calls_to(ctx, "torch.load"):
        if is_constant(keyword(load, "weights_only"), False):
            continue  # explicit: TW110 judges that
        if allowlisted or _under_safe_globals(ctx, load):
            continue  # the module's classes are allowed: weights_only can rebuild it
        saved = _whole_module_saved_to(ctx, load)
        used = _used_as_module(ctx, load)
        if saved is not None:
            yield Hit(
                load,
                f"loads the whole module saved on line {saved.lineno}, which "
                "weights_only=True (the default since torch 2.6) refuses",
            )
        elif used is not None:
            yield Hit(
                load,
                f"the loaded object is used as a module ({used}); weights_only=True "
                "(the default since torch 2.6) refuses whole modules",
            )


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
    Cannot see: a module held under a name that does not look like one (``torch.save(g, f)``
    for a generator built elsewhere); it knows modules by their constructor or their name.
    """
    for call in _calls_to(ctx, "torch.save"):
        if not call.args:
            continue
        saved = call.args[0]
        entries = _saved_entries(ctx, saved) or []
        values = [saved, *(saved.elts if isinstance(saved, ast.List | ast.Tuple) else ()), *(v for _, v in entries)]
        module = next((m for v in values if (m := _whole_module(ctx, v)) is not None), None)
        if module is not None:
            yield Hit(call, f"torch.save of the whole module {ast.unparse(module)}")


# Calls and attributes that hand back the same module: model.cpu(), net.module, model.to(...).
_SAME_MODULE = frozenset({"cpu", "cuda", "to", "half", "float", "double", "bfloat16", "eval", "train", "module"})


def _whole_module(ctx: FileContext, value: ast.expr) -> ast.expr | None:
    """The module expression ``value`` evaluates to, or None when it is not a module."""
    if isinstance(value, ast.IfExp):
        return _whole_module(ctx, value.body) or _whole_module(ctx, value.orelse)
    node: ast.expr = value
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SAME_MODULE:
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "module":
            node = node.value
        else:
            break
    if isinstance(node, ast.Name | ast.Attribute) and ctx.kind(node) == "model":
        return value
    return None


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
    built = [
        v
        for v in ctx.assignments.get(name or "", [])
        if ctx.scope_of(v) is scope and position(v) < position(node)
    ]
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
    if label.lower().startswith(words[kind]):
        return True
    return isinstance(value, ast.Call) and method(value) == "state_dict" and ctx.kind(receiver_of(value)) == kind


@rule("TW119", Level.WARNING, hint='add "optimizer": optimizer.state_dict() (and the scheduler\'s)')
def checkpoint_without_optimizer(ctx: FileContext) -> Iterator[Hit]:
    """A checkpoint dict with the model state but no optimizer state.

    Why: resuming from it restarts Adam's moments and the LR schedule from zero; the loss
    jumps and the run is not the run it claims to continue.
    Fix: save ``optimizer.state_dict()`` (and scheduler / scaler states) with the model.
    Cannot see: optimizers built in other files (it needs one built here), state saved by a
    second ``torch.save``, or dict keys built at run time. Plain SGD without momentum keeps no
    state and is not reported, nor is a file that never loads anything back (its checkpoint
    is a model for inference, as in attention-is-all-you-need's ``model.chkpt`` for
    translate.py); a resume written in another script is missed.
    """
    builds_optimizer = any(ctx.kind(t) == "optimizer" for t in _assigned_names(ctx))
    if not builds_optimizer or _only_stateless_sgd(ctx) or not _loads_anything(ctx):
        return
    for call in _calls_to(ctx, "torch.save"):
        entries = _saved_entries(ctx, call.args[0]) if call.args else None
        if entries is None:
            continue
        has_model = any(_mentions(ctx, k, v, "model") for k, v in entries)
        if has_model and not any(_mentions(ctx, k, v, "optimizer") for k, v in entries):
            yield Hit(call, "checkpoint saves the model but not the optimizer state")


def _loads_anything(ctx: FileContext) -> bool:
    """Whether the file reads a saved state back at all (``torch.load``, ``load_state_dict``,
    a ``load_checkpoint`` / ``resume`` helper): without that, nothing here resumes."""
    return any(
        ctx.qualname(c.func) == "torch.load"
        or re.search(r"load_state|load_checkpoint|resume|restore|from_checkpoint", method(c) or dotted(c.func) or "")
        for c in ctx.calls
    )


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
