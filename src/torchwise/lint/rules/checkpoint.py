"""Rules about loading: torch.load safety (TW110) and whole pickled modules it refuses (TW125)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword, method
from torchwise.lint.context import FileContext, position
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.findings import Edit, Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.snapshots import spread_into_object


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
    in the same function (reloaded on the device that wrote it; a formatted name counts by its
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


def file_argument(call: ast.Call) -> ast.expr | None:
    """The file of ``torch.load(f)`` (first argument) / ``torch.save(obj, f)`` (second)."""
    index = 1 if (dotted(call.func) or "").endswith("save") else 0
    value = keyword(call, "f")
    if value is None and len(call.args) > index:
        value = call.args[index]
    return value


def path_text(ctx: FileContext, node: ast.expr | None) -> str | None:
    """The path a file argument names: ``f`` bound by ``with open(path) as f`` reads as path,
    and a formatted name reads as its template (``'{}.pkl'.format(epoch)`` and
    ``'{}.pkl'.format(best_epoch)`` name files of one family). A bare variable names a file
    only within its function: awd-lstm's ``model_save(fn)`` and the module's cached-corpus
    ``fn`` are different files."""
    if node is None:
        return None
    if isinstance(node, ast.Name):
        for ancestor in ctx.ancestors(node):
            if isinstance(ancestor, ast.With):
                for item in ancestor.items:
                    opened = item.context_expr
                    # once rebound to the opened path (a constant, a call), outer `with`s name other files
                    if not isinstance(node, ast.Name):
                        break
                    if dotted(item.optional_vars) == node.id and isinstance(opened, ast.Call) and opened.args:
                        node = opened.args[0]
                        break
    if isinstance(node, ast.Name):
        scope = ctx.scope_of(node)
        given = [v for v in ctx.assignments.get(node.id, []) if ctx.scope_of(v) is scope]
        if len(given) == 1:  # file_path = os.path.join(self.ckpt_dir, filename) (Beta-VAE)
            return _template(given[0])
        return f"{node.id} in {id(scope)}"
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


def saves_with_paths(ctx: FileContext) -> list[tuple[ast.Call, str | None]]:
    return ctx.memo("saves", lambda: [(c, path_text(ctx, file_argument(c))) for c in _calls_to(ctx, "torch.save")])


def _saved_here(ctx: FileContext, load: ast.Call) -> bool:
    """A path this file writes: earlier in the same run (reloaded on the device that wrote
    it), or only ever with tensors that are not weights (a cache of host data)."""
    path = path_text(ctx, file_argument(load))
    saves = [save for save, saved in saves_with_paths(ctx) if path is not None and saved == path]
    if any(same_run_before(ctx, save, load) for save in saves):
        return True
    if saves and not ctx.mentions_accelerator:
        return True  # written by this CPU-only script: host tensors load anywhere
    return bool(saves) and not any(_saves_weights(ctx, save) for save in saves)


def same_run_before(ctx: FileContext, save: ast.Call, load: ast.Call) -> bool:
    """The save runs before the load in one run: earlier in the same function, or in a function
    that a caller runs before the load's (``train_rnn(); sample()``). A save in
    ``save_checkpoint()`` and a load in ``load_checkpoint()`` with no such order belong to
    different runs (Beta-VAE's solver resumes from another one)."""
    saving, loading = ctx.scope_of(save), ctx.scope_of(load)
    if saving is loading:
        return position(save) < position(load)
    for caller in {ctx.scope_of(c) for c in ctx.calls if ctx.callee(c) is loading}:
        first_save = min((position(c) for c in ctx.calls_in(caller) if ctx.callee(c) is saving), default=None)
        first_load = min((position(c) for c in ctx.calls_in(caller) if ctx.callee(c) is loading), default=None)
        if first_save is not None and first_load is not None and first_save < first_load:
            return True
    return False


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
    path = path_text(ctx, file_argument(load))
    for save, saved in saves_with_paths(ctx):
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
    entry = parent if isinstance(parent, ast.Subscript) and parent.value is load else None
    if not isinstance(statement, ast.Assign) or statement.value not in {load, entry}:
        return None  # `model = torch.load(f)` or `model = torch.load(f)["model"]` (pytorch-vdsr's eval.py)
    names = {dotted(t) for t in statement.targets} - {None}
    scope = ctx.scope_of(load)
    for node in ctx.walk(scope):
        # `model = checkpoint["model"]`: an entry of the loaded dict (sgrvinod's SSD tutorial)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript):
            if dotted(node.value.value) in names and position(node) > position(load):
                names |= {dotted(t) for t in node.targets} - {None}
    for call in _calls_reading(ctx, scope, names):
        if not _runs_after(ctx, call, load, scope):
            continue
        if dotted(call.func) in names:
            return f"{dotted(call.func)}(...)"
        owner = receiver_of(call)
        if method(call) in _MODULE_METHODS and dotted(owner) in names:
            return f"{dotted(owner)}.{method(call)}()"
        if method(call) in _MODULE_METHODS and isinstance(owner, ast.Subscript) and dotted(owner.value) in names:
            if not _saved_here_as_weights(ctx, load, owner.slice):
                return f"{ast.unparse(owner)}.{method(call)}()"  # checkpoint["model"].state_dict(): pytorch-vdsr
        handed = _run_by_callee(ctx, call, names)
        if handed is not None:
            return handed
    return None


def _saved_here_as_weights(ctx: FileContext, load: ast.Call, key: ast.expr) -> bool:
    """This file saves the loaded path itself, and every value it saves under ``key`` is a state
    dict or None (``'ema': ema.state_dict() if ema is not None else None``): a module method
    called on that entry is a branch for checkpoints of other shapes, not this file's
    (fast-autoaugment's ``data['ema'].state_dict()`` behind ``isinstance(..., dict)``)."""
    path = path_text(ctx, file_argument(load))
    values = [
        value
        for save, saved in saves_with_paths(ctx)
        if path is not None and saved == path and save.args and isinstance(save.args[0], ast.Dict)
        for entry, value in zip(save.args[0].keys, save.args[0].values, strict=True)
        if entry is not None and ast.dump(entry) == ast.dump(key)
    ]
    return bool(values) and all(_weights_or_none(v) for v in values)


def _weights_or_none(value: ast.expr) -> bool:
    if isinstance(value, ast.IfExp):
        return _weights_or_none(value.body) and _weights_or_none(value.orelse)
    return is_constant(value, None) or (isinstance(value, ast.Call) and method(value) == "state_dict")


def _run_by_callee(ctx: FileContext, call: ast.Call, names: set[str | None]) -> str | None:
    """A loaded name handed to a function of this file that runs it as a module:
    char-rnn's generate.py loads ``decoder`` and passes it to ``generate(decoder, ...)``,
    which calls ``decoder(inp, hidden)``."""
    function = ctx.callee(call)
    if function is None:
        return None
    parameters = [a.arg for a in function.args.args]
    if parameters[:1] in (["self"], ["cls"]) and isinstance(call.func, ast.Attribute):
        parameters = parameters[1:]  # self.generate(decoder): `self` is not written at the call
    for index, arg in enumerate(call.args):
        if dotted(arg) not in names or index >= len(parameters):
            continue
        parameter = parameters[index]
        for inner in ctx.calls_in(function):
            if dotted(inner.func) == parameter or (
                method(inner) in _MODULE_METHODS and dotted(receiver_of(inner)) == parameter
            ):
                return f"{function.name}() runs it as {ast.unparse(inner.func)}(...)"
    return None


def _runs_after(ctx: FileContext, call: ast.Call, load: ast.Call, scope: ast.AST) -> bool:
    """``call`` comes after ``load`` in its scope, or sits in a function defined after the load
    or called after it (awd-lstm's pointer.py defines ``evaluate()`` above the module-level
    load and calls it below)."""
    if ctx.scope_of(call) is scope or position(call) > position(load):
        return position(call) > position(load)
    function = ctx.function(call)
    return any(ctx.callee(c) is function and position(c) > position(load) for c in ctx.calls_in(scope))


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
    A module-level load is followed into the functions that read it as a global, and a loaded
    name into a function of this file it is handed to (``generate(decoder)``).
    Entries written back as an object's attributes (drqv2's ``self.__dict__[k] = v`` over the
    loaded snapshot) are pickled objects too.
    Cannot see: pickled objects other than modules (numpy arrays, argparse Namespaces,
    custom classes) unless the result is used as a module, or files saved by other scripts.
    An entry this file itself saves to that path only as a state dict or None is no module.
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
        spread = spread_into_object(ctx, load)
        if spread is not None and saved is None and used is None:
            yield Hit(
                load,
                f"the loaded entries become an object's attributes ({spread}): pickled objects, "
                "which weights_only=True (the default since torch 2.6) refuses",
            )
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
