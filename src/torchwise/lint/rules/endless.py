"""Loaders that never run out: a ``DataLoader`` whose sampler (or batch sampler) is a class of this
file whose ``__iter__`` never ends (a ``while True`` generator, directly or through a method it
returns the iterator of, or ``itertools.cycle``). One ``iter()`` over such a loader serves any
number of ``next()`` calls (partial-conv inpainting's ``InfiniteSampler``)."""

from __future__ import annotations

import ast

from torchwise.lint.ast_names import dotted, keyword
from torchwise.lint.context import FileContext

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
