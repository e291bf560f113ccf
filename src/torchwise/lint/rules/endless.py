"""Loaders that never run out: a ``DataLoader`` whose sampler (or batch sampler) is a class of this
file whose ``__iter__`` never ends (a ``while True`` generator, directly or through a method it
returns the iterator of, or ``itertools.cycle``). One ``iter()`` over such a loader serves any
number of ``next()`` calls (partial-conv inpainting's ``InfiniteSampler``)."""

from __future__ import annotations

import ast

from torchwise.lint.ast_names import dotted, is_constant, keyword
from torchwise.lint.context import FileContext
from torchwise.lint.evidence import caller_outside, unread
from torchwise.lint.findings import Unseen

Function = ast.FunctionDef | ast.AsyncFunctionDef


def endless_loader(ctx: FileContext, loader: ast.expr) -> bool:
    """``loader`` (a ``DataLoader(...)`` call, or a name last given one) draws its indices from a
    sampler that never ends."""
    built = loader if isinstance(loader, ast.Call) else _last_call(ctx, loader)
    if built is None:
        return False
    for sampler in (keyword(built, "sampler"), keyword(built, "batch_sampler")):
        made = sampler if isinstance(sampler, ast.Call) or sampler is None else _last_call(ctx, sampler)
        if made is not None and _endless_class(ctx, dotted(made.func)):
            return True
    return False


def _last_call(ctx: FileContext, name: ast.expr) -> ast.Call | None:
    values = ctx.assignments.get(dotted(name) or "", [])
    return values[-1] if values and isinstance(values[-1], ast.Call) else None


def _endless_class(ctx: FileContext, name: str | None) -> bool:
    classes = [n for n in ctx.nodes if isinstance(n, ast.ClassDef) and n.name == name]
    if len(classes) != 1:
        return False
    methods = {f.name: f for f in classes[0].body if isinstance(f, Function)}
    return "__iter__" in methods and _never_ends(methods["__iter__"], methods, set())


def _never_ends(function: Function, methods: dict[str, Function], seen: set[str]) -> bool:
    """A generator whose ``while True`` loop has no ``break`` or ``return``, or a function that
    returns the iterator of another such method of its class (``return iter(self.loop())``) or
    ``itertools.cycle(...)``."""
    seen.add(function.name)
    for node in ast.walk(function):
        if isinstance(node, ast.While) and _always(node.test) and _yields(node) and not _leaves(node):
            return True
        if isinstance(node, ast.Return) and node.value is not None:
            for call in (n for n in ast.walk(node.value) if isinstance(n, ast.Call)):
                name = dotted(call.func) or ""
                if name.rsplit(".", 1)[-1] == "cycle":
                    return True
                inner = methods.get(name.removeprefix("self."))
                if name.startswith("self.") and inner is not None and inner.name not in seen:
                    if _never_ends(inner, methods, seen):
                        return True
    return False


def _always(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value)


def _yields(loop: ast.While) -> bool:
    return any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ast.walk(loop))


def _leaves(loop: ast.While) -> bool:
    """A ``return`` anywhere in the loop, or a ``break`` that belongs to it (not to a loop inside)."""
    stack: list[ast.AST] = list(ast.iter_child_nodes(loop))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return | ast.Break):
            return True
        if not isinstance(node, ast.For | ast.AsyncFor | ast.While | Function | ast.Lambda | ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.While):
            stack.extend(n for n in ast.walk(node) if isinstance(n, ast.Return))
    return False


def endless_unread(ctx: FileContext, loader: ast.expr) -> tuple[Unseen, ...]:
    """Code lint cannot read that could make ``loader`` endless: a sampler or batch sampler of
    another file (an ``InfiniteSampler`` whose ``__iter__`` lint cannot read), a dataset of
    another file where nothing says it is map-style (no ``shuffle=True``, which an
    ``IterableDataset`` refuses, and no sampler), a factory of another file that returns the
    loader, or a caller outside this file that hands it in."""
    built = loader if isinstance(loader, ast.Call) else _last_call(ctx, loader)
    if built is None:
        function = ctx.function(loader)
        params = {a.arg for a in function.args.args} if function is not None else set()
        if isinstance(loader, ast.Name) and loader.id in params:
            return caller_outside(ctx, function, "hands it a loader that never runs out")
        return ()
    if (dotted(built.func) or "").rsplit(".", 1)[-1] != "DataLoader":
        who = unread(ctx, built)
        return (Unseen(f"{who}(...)", "returns a loader that never runs out"),) if who else ()
    found = []
    samplers = [v for v in (keyword(built, "sampler"), keyword(built, "batch_sampler")) if v is not None]
    for sampler in samplers:
        made = sampler if isinstance(sampler, ast.Call) else _last_call(ctx, sampler)
        who = unread(ctx, made) if made is not None else None
        if who:
            found.append(Unseen(f"the sampler {who}(...)", "never runs out"))
    dataset = keyword(built, "dataset") or (built.args[0] if built.args else None)
    made = dataset if isinstance(dataset, ast.Call) or dataset is None else _last_call(ctx, dataset)
    map_style = is_constant(keyword(built, "shuffle"), True) or bool(samplers)
    who = unread(ctx, made) if made is not None and not map_style else None
    if who:
        found.append(Unseen(f"the dataset {who}(...)", "is an endless IterableDataset"))
    return tuple(found)
