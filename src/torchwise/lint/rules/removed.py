"""Code the libraries refuse today: names torchvision, torchtext and NumPy removed, a call the
optimizer no longer takes (TW137), and ``~`` on a bool flag, which is never false (TW138).

>>> from torchwise.lint.engine import lint_source
>>> src = "import torchvision.transforms as T\\nt = T.Scale(256)\\n"
>>> [(f.code, f.line) for f in lint_source(src)]
[('TW137', 2)]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, keyword, method, receiver
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.data import argparse_option

# Each name, what replaced it and the release that removed it (the libraries' release notes).
_REMOVED = {
    "torchvision.transforms.Scale": ("transforms.Resize", "torchvision 0.12"),
    "torchvision.transforms.RandomSizedCrop": ("transforms.RandomResizedCrop", "torchvision 0.12"),
    "torch.utils.serialization": ("torch.load", "torch 1.0"),
    # NumPy 1.24 removed its aliases of the builtins (np.bool came back in NumPy 2.0).
    **{f"numpy.{name}": (f"the builtin {name}", "NumPy 1.24") for name in ("float", "int", "complex", "object", "str")},
    # Python 3.10 removed collections' aliases of the collections.abc classes (bpo-37324).
    **{
        f"collections.{name}": (f"collections.abc.{name}", "Python 3.10")
        for name in (
            "Awaitable Coroutine AsyncIterable AsyncIterator AsyncGenerator Hashable Iterable Iterator "
            "Generator Reversible Sized Container Callable Collection Set MutableSet Mapping "
            "MutableMapping MappingView KeysView ItemsView ValuesView Sequence MutableSequence ByteString"
        ).split()
    },
    **{
        f"torchtext.data.{name}": ("torchtext.legacy (then torchdata / plain DataLoaders)", "torchtext 0.12")
        for name in (
            "Field RawField NestedField LabelField ReversibleField Example Dataset TabularDataset "
            "Iterator BucketIterator BPTTIterator Batch Pipeline"
        ).split()
    },
}


# make_grid's range= became value_range (pytorch/vision#3148, torchvision 0.10) and was dropped.
_GRID_FUNCTIONS = frozenset({"torchvision.utils.save_image", "torchvision.utils.make_grid"})


@rule("TW137", Level.ERROR, hint="use the name that replaced it (the message says which)")
def removed_api(ctx: FileContext) -> Iterator[Hit]:
    """A torchvision / torchtext / NumPy name that the library removed, or a call it no longer takes.

    Why: ``transforms.Scale`` and ``transforms.RandomSizedCrop`` left torchvision in 0.12;
    torchtext's ``data.Field`` / ``TabularDataset`` / ``BucketIterator`` moved to
    ``torchtext.legacy`` in 0.9 and were removed in 0.12; ``torch.utils.serialization`` went in
    torch 1.0; ``np.float`` / ``np.int`` / ``np.object`` / ``np.str`` / ``np.complex`` in NumPy
    1.24; ``collections.Mapping`` and the other aliases of ``collections.abc`` in Python 3.10.
    The line raises ``AttributeError`` (or ``ImportError``) on a current install.
    ``save_image`` / ``make_grid`` no longer take ``range=`` (renamed ``value_range``).
    ``optimizer.load_state_dict(state, False)`` passes ``strict``, which only modules take: an
    optimizer's or a scheduler's ``load_state_dict`` takes the state alone (``TypeError``).
    ``yaml.load(stream)`` without a ``Loader`` raises ``TypeError`` since PyYAML 6.0
    (pytorch-semseg's config).
    Fix: the replacement the message names; ``load_state_dict(state)`` for an optimizer;
    ``yaml.safe_load(stream)``.
    It reads names through the file's imports (``import torchvision.transforms as T``).
    Cannot see: a removed name reached through another module or a ``getattr``; a project that
    pins the old release (it then runs, and the finding says what an upgrade breaks).
    """
    for node in ctx.nodes:
        if isinstance(node, ast.Attribute | ast.Name) and not isinstance(ctx.parents.get(node), ast.Attribute):
            name = ctx.qualname(node) or ""
            removed = next((k for k in _REMOVED if name == k or name.startswith(f"{k}.")), None)
            if removed is not None:
                new, release = _REMOVED[removed]
                yield Hit(node, f"{removed} was removed in {release}: use {new}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            unused = [
                f"{node.module}.{a.name}"
                for a in node.names
                if f"{node.module}.{a.name}" in _REMOVED and not _used(ctx, a.asname or a.name)
            ]
            if unused:  # a name that is used is reported where it is used
                new, release = _REMOVED[unused[0]]
                yield Hit(node, f"{', '.join(unused)}: removed in {release}; use {new}")
    for call in ctx.calls:
        if (ctx.qualname(call.func) or "") == "yaml.load" and len(call.args) == 1 and not call.keywords:
            yield Hit(call, "yaml.load(stream) without Loader= is a TypeError since PyYAML 6.0: use yaml.safe_load")
        if (ctx.qualname(call.func) or "") in _GRID_FUNCTIONS and keyword(call, "range") is not None:
            name = (ctx.qualname(call.func) or "").rsplit(".", 1)[-1]
            yield Hit(call, f"{name}(range=...) is refused by current torchvision (renamed value_range): TypeError")
        if method(call) != "load_state_dict" or not _torch_optimizer(ctx, receiver(call)):
            continue
        if len(call.args) > 1 or keyword(call, "strict") is not None:
            what = ctx.kind(receiver(call)) or "optimizer"
            yield Hit(call, f"the {what}'s load_state_dict takes the state alone: strict= is a module's (TypeError)")


def _torch_optimizer(ctx: FileContext, node: ast.expr | None) -> bool:
    """Built by a ``torch.optim`` class (``optim.Adam(...)``, or ``optim_map[name](...)`` over a
    dict holding them, RAdam's train_1bw.py), not a wrapper with its own ``load_state_dict``
    (fairseq's ``FP16Optimizer.load_state_dict(state, overrides)``)."""
    key = dotted(node) if node is not None else None
    built = [v for v in ctx.assignments.get(key or "", []) if isinstance(v, ast.Call)]
    if not built:
        return False
    func = built[-1].func
    if isinstance(func, ast.Subscript):
        tables = [v for v in ctx.assignments.get(dotted(func.value) or "", []) if isinstance(v, ast.Dict)]
        return bool(tables) and any(_torch_optim_class(ctx, v) for v in tables[-1].values)
    return _torch_optim_class(ctx, func)


def _torch_optim_class(ctx: FileContext, node: ast.expr) -> bool:
    """``optim.Adam`` / ``torch.optim.lr_scheduler.StepLR``, or ``functools.partial(optim.SGD, ...)``."""
    if isinstance(node, ast.Call) and (ctx.qualname(node.func) or "").endswith("partial") and node.args:
        node = node.args[0]
    return (ctx.qualname(node) or "").startswith("torch.optim.")


def _used(ctx: FileContext, name: str) -> bool:
    """The imported name is read somewhere (that use is reported instead of the import)."""
    return any(isinstance(n, ast.Name) and n.id == name for n in ctx.nodes)


@rule("TW138", Level.WARNING, hint="use `not flag`: ~ on a bool is bitwise (~True == -2, ~False == -1)")
def invert_of_bool_flag(ctx: FileContext) -> Iterator[Hit]:
    """``~args.flag`` on a ``store_true`` option: ``~False`` is ``-1``, true, so it never turns off.

    Why: ``~`` is bitwise NOT on Python ints, and a bool is an int: ``~True == -2`` and
    ``~False == -1``, both true. ``use_wandb = ~args.nowandb`` (vision-transformers-cifar10)
    enables wandb whatever the flag says.
    Fix: ``not args.nowandb``.
    It follows the value: an option this file declares with ``action="store_true"`` /
    ``"store_false"``, or ``True`` / ``False`` written there.
    Cannot see: a bool that comes from elsewhere (a config, a function's result); on a tensor
    or an array of bools ``~`` is the right logical NOT and is never reported.
    """
    for node in ctx.nodes:
        if not (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert)):
            continue
        operand = node.operand
        if isinstance(operand, ast.Constant) and isinstance(operand.value, bool):
            yield Hit(node, f"~{operand.value} is {~operand.value}: a bool inverted bitwise is never false")
        elif isinstance(operand, ast.Attribute) and _bool_option(ctx, operand.attr):
            yield Hit(node, f"~{ast.unparse(operand)} is -1 or -2, never false: the flag is a bool")


def _bool_option(ctx: FileContext, option: str) -> bool:
    declared = argparse_option(ctx, option)
    action = keyword(declared, "action") if declared is not None else None
    return isinstance(action, ast.Constant) and action.value in {"store_true", "store_false"}
