"""Rules about old code that no longer runs: torch 0.3's ``async=`` keyword of ``.cuda()``
(TW135), Python 2's ``it.next()`` on an iterator (TW136) and its removed builtins (TW144).

>>> from torchwise.lint.engine import lint_source
>>> [(f.code, f.line) for f in lint_source("import torch\\ny = x.cuda(async=True)\\n")]
[('TW135', 2)]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Edit, Hit, Level
from torchwise.lint.legacy import PLACEHOLDER
from torchwise.lint.registry import rule


@rule("TW135", Level.ERROR, hint="use .cuda(non_blocking=True): async= is a syntax error since Python 3.7")
def async_keyword(ctx: FileContext) -> Iterator[Hit]:
    """``x.cuda(async=True)``: torch 0.3's keyword, a syntax error since Python 3.7.

    Why: ``async`` became a reserved word in Python 3.7, so a script that passes ``async=True``
    to ``.cuda()`` (or ``.to()``) does not even start: Python stops at the first one with
    "invalid syntax". torch renamed the argument ``non_blocking`` in 0.4.
    Fix: ``.cuda(non_blocking=True)``; ``torchwise lint --fix`` rewrites it. An ``async=`` given
    to any other call (DeepRL's ``ReplayWrapper(..., async=True)``) is the same syntax error, but
    its new name is the library's (DeepRL's is ``async_replay``): lint says so and writes no fix.
    Lint reads the rest of such a file with the keyword renamed, so its other torch 0.3
    mistakes (``loss.data[0]``, ``Variable(x, volatile=True)``) are reported too.
    Cannot see: any other syntax error in the same file (lint then reports that one and stops,
    as Python does), nor Python 2 syntax other than one-line ``print x`` statements (TW144).
    """
    renamed = {line for line, _ in ctx.renamed_async}
    for node in ctx.nodes:
        if isinstance(node, ast.keyword) and node.arg == PLACEHOLDER and node.lineno in renamed:
            call = ctx.parents.get(node)
            if not (isinstance(call, ast.Call) and method(call) in _TORCH_MOVES):
                yield Hit(
                    node,
                    "async= is a syntax error since Python 3.7 (async is a reserved word): the file does not run",
                    hint="rename the keyword to the one this function takes now: async is reserved since Python 3.7",
                )
                continue
            end = (node.lineno, node.col_offset + len(PLACEHOLDER))
            yield Hit(
                node,
                "async=True is a syntax error since Python 3.7 (torch 0.4 renamed it non_blocking)",
                edits=(Edit((node.lineno, node.col_offset), end, "non_blocking"),),
            )


# Tensor and module methods whose `async=` torch 0.4 renamed `non_blocking`.
_TORCH_MOVES = frozenset({"cuda", "to", "cpu", "pin_memory", "copy_"})


@rule("TW136", Level.ERROR, hint="use next(it): Python 3 iterators have no .next() method")
def python2_next_method(ctx: FileContext) -> Iterator[Hit]:
    """``it.next()`` on an iterator: Python 2's method, gone in Python 3 (and from DataLoader's).

    Why: Python 3 iterators and generators have ``__next__`` and no ``next`` method; a
    DataLoader iterator kept a ``next`` alias until torch 1.13. ``it.next()`` raises
    ``AttributeError``, and a bare ``except:`` around it (FixMatch's and MixMatch's
    ``except: it = iter(loader); it.next()``) only moves the error to the retry.
    Fix: ``next(it)``; ``torchwise lint --fix`` rewrites it.
    It follows the name: every value the file gives it is ``iter(...)`` or a call of a
    generator function defined here (one with ``yield``); ``iter(loader).next()`` written
    inline is one too (PyTorch-ENet's ``images, labels = iter(test_loader).next()``).
    Cannot see: iterators made elsewhere (a helper of another file, an attribute set there),
    or an object whose class defines its own ``next``.
    """
    for call in ctx.calls:
        if method(call) != "next" or call.args or call.keywords:
            continue
        target = receiver(call)
        if target is not None and _makes_iterator(ctx, target):
            text = ast.unparse(target)
            edits = (Edit.replace(call, f"next({text})"),) if call.lineno == call.end_lineno else ()
            yield Hit(call, f"{text}.next(): Python 3 iterators have no .next() method (AttributeError)", edits=edits)
            continue
        name = dotted(target)
        values = ctx.assignments.get(name or "", [])
        if values and all(_makes_iterator(ctx, v) for v in values):
            edits = (Edit.replace(call, f"next({name})"),) if call.lineno == call.end_lineno else ()
            yield Hit(call, f"{name}.next(): Python 3 iterators have no .next() method (AttributeError)", edits=edits)


def _makes_iterator(ctx: FileContext, value: ast.AST) -> bool:
    """``iter(x)``, or a call of a generator function of this file."""
    if not isinstance(value, ast.Call):
        return False
    if dotted(value.func) == "iter":
        return True
    target = ctx.callee(value)
    return target is not None and any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ctx.walk(target))


# Python 2 builtins Python 3 removed, with what replaced them.
_PY2_BUILTINS = {
    "xrange": "range",
    "raw_input": "input",
    "unicode": "str",
    "basestring": "str",
    "unichr": "chr",
    "long": "int",
    "execfile": "exec(open(path).read())",
    "reduce": "functools.reduce",
    "cmp": "a key function",
}
_PY2_DICT_METHODS = {"iteritems": "items", "itervalues": "values", "iterkeys": "keys", "has_key": "`key in d`"}


@rule("TW144", Level.ERROR, hint="use the Python 3 name (the message says which)")
def python2_names(ctx: FileContext) -> Iterator[Hit]:
    """Python 2's ``xrange``, ``raw_input``, ``unicode``, ``d.iteritems()``, ``d.has_key(k)``, ``print x``.

    Why: Python 3 removed them: the line raises ``NameError`` (or ``AttributeError`` for the dict
    methods) when it runs, often inside the training loop (``for i in xrange(iters):``); a
    ``print x`` statement is a syntax error, so the file does not start at all.
    Fix: ``range``, ``input``, ``str``, ``d.items()``, ``k in d``, ``functools.reduce``, ``print(x)``.
    A file whose only syntax errors are print statements is read with them parenthesised, so its
    other mistakes are reported too; the first print statement is reported, with their count.
    It reports a removed builtin that the file neither defines, assigns nor imports (a
    ``try: raw_input except NameError: raw_input = input`` shim counts as defining it), and the
    removed dict methods called on anything.
    Cannot see: names of Python 2 modules (``cPickle``, ``urllib2``: the import fails first and
    says so), or an object of another file whose class defines ``iteritems``.
    """
    if ctx.print_statements:
        line, col = ctx.print_statements[0]
        first = next(n for n in ctx.calls if dotted(n.func) == "print" and (n.lineno, n.col_offset) == (line, col))
        count = len(ctx.print_statements)
        yield Hit(first, f"print statement: a SyntaxError in Python 3, the file does not run ({count} in this file)")
    defined = set(ctx.assignments) | set(ctx.functions) | set(ctx.imports)
    defined |= {n.id for n in ctx.nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}  # for, with, :=
    defined |= {n.name for n in ctx.nodes if isinstance(n, ast.ClassDef)}
    defined |= {a.arg for n in ctx.nodes if isinstance(n, ast.arguments) for a in [*n.args, *n.kwonlyargs]}
    for node in ctx.nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in _PY2_BUILTINS:
            if node.id not in defined:
                yield Hit(node, f"{node.id} is Python 2 only (NameError in Python 3): use {_PY2_BUILTINS[node.id]}")
        elif isinstance(node, ast.Call) and (name := method(node)) in _PY2_DICT_METHODS:
            if _defines_method(ctx, name):
                continue
            new = _PY2_DICT_METHODS[name or ""]
            yield Hit(node, f".{name}() is Python 2 only (AttributeError in Python 3): use {new}")


def _defines_method(ctx: FileContext, name: str | None) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in ctx.nodes)
