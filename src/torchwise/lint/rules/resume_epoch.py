"""TW151: an epoch saved after it was trained, and counted from again by the resume (the other half
of resume bookkeeping; TW150, the best score, is in ``resume_bookkeeping.py``).

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "import torch\\n"
...     "ckpt = torch.load('last.pt')\\n"
...     "start = ckpt['epoch']\\n"
...     "for epoch in range(start, 90):\\n"
...     "    loss_fn(model(x), y).backward()\\n"
...     "    torch.save({'epoch': epoch, 'model': model.state_dict()}, 'last.pt')\\n"
... )
>>> [(f.code, f.line) for f in lint_source(src) if f.code == "TW151"]
[('TW151', 6)]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext, position
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.callers import handed_params
from torchwise.lint.rules.resume_bookkeeping import POSITION_KEY, range_start

_HINT = "save 'epoch': epoch + 1 (the next epoch to run), or resume at checkpoint['epoch'] + 1"


@rule("TW151", Level.WARNING, hint=_HINT)
def saved_epoch_trained_again(ctx: FileContext) -> Iterator[Hit]:
    """An epoch saved after it was trained, and counted from again by the resume.

    Why: the checkpoint written at the end of epoch ``e`` says ``'epoch': e``; the resume sets the
    start to ``checkpoint['epoch']`` and ``range(start, n)`` runs ``e`` again: every resumed run
    trains one epoch twice, and a schedule keyed on the epoch is one step behind
    (two-stream-action-recognition, Pointnet's semantic segmentation).
    Fix: save ``epoch + 1`` (pytorch/examples' ImageNet script), or start at ``checkpoint['epoch'] + 1``.
    It reports a save whose dict holds the loop's own counter under the key that the resume reads
    back as the loop's start, when the save runs after that epoch's training (a backward or an
    optimizer step in the loop's body before it, or in a function of this file called there).
    The save may sit in a function the loop calls after training, handed the counter
    (kuangliu's pytorch-cifar ``test(epoch)``).
    Cannot see: an epoch read back from a file name or by a helper of another file; a dict built
    by another function and handed to the save.
    """
    starts = _resumed_starts(ctx)
    for loop in (n for n in ctx.nodes if isinstance(n, ast.For)):
        start = range_start(loop)
        counter = dotted(loop.target)
        if start is None or counter is None or start not in starts:
            continue
        key, read = starts[start]
        if _saved_incremented(ctx, ctx.scope_of(loop), key):
            continue  # another save writes epoch + 1 under the same key: which file is read back decides
        for save, entry in _saves_of(ctx, loop, counter, key):
            if _trained_before(ctx, loop, save):
                where = f"'{key}': {ast.unparse(entry)}"
                yield Hit(entry, f"saves {where} after training that epoch, and the resume (line {read.lineno}) "
                          "starts range() from it: a resumed run trains that epoch again")


def _resumed_starts(ctx: FileContext) -> dict[str, tuple[str, ast.Assign]]:
    """name -> (key, assignment) for ``start = checkpoint[key]`` exactly (no ``+ 1``)."""
    starts: dict[str, tuple[str, ast.Assign]] = {}
    for node in ctx.nodes:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Subscript)):
            continue
        key = node.value.slice
        name = dotted(node.targets[0])
        if name and isinstance(key, ast.Constant) and isinstance(key.value, str) and POSITION_KEY.search(key.value):
            starts[name] = (key.value, node)
    return starts


def _saves_of(ctx: FileContext, loop: ast.For, counter: str, key: str) -> Iterator[tuple[ast.Call, ast.expr]]:
    """(save call, the dict value) for saves in the loop, or in a function of this file the loop
    calls with the counter, that write ``{key: counter}``."""
    for call in ctx.calls_in(loop):
        yield from ((call, v) for v in _saved_entries(ctx, call, key) if dotted(v) == counter)
        target = ctx.callee(call)
        if target is None:
            continue
        for param in handed_params(call, target, counter):
            for inner in ctx.calls_in(target):
                yield from ((call, v) for v in _saved_entries(ctx, inner, key) if dotted(v) == param)


def _saved_entries(ctx: FileContext, call: ast.Call, key: str) -> list[ast.expr]:
    """Values under ``key`` in the dict a save writes (inline, or a name given a dict literal in
    the same scope)."""
    if "save" not in (dotted(call.func) or "").rsplit(".", 1)[-1].lower() or not call.args:
        return []
    saved = call.args[0]
    dicts = [saved] if isinstance(saved, ast.Dict) else []
    if isinstance(saved, ast.Name):
        scope = ctx.scope_of(call)
        given = ctx.assignments.get(saved.id, [])
        dicts += [v for v in given if isinstance(v, ast.Dict) and ctx.scope_of(v) is scope]
    pairs = [(k, v) for d in dicts for k, v in zip(d.keys, d.values, strict=True)]
    return [v for k, v in pairs if isinstance(k, ast.Constant) and k.value == key]


def _trained_before(ctx: FileContext, loop: ast.For, save: ast.Call) -> bool:
    """A backward or an optimizer step in the loop before ``save`` (directly or in a function of
    this file called there)."""
    for call in ctx.calls_in(loop):
        if position(call) >= position(save):
            break
        reached = [call, *(ctx.reached_calls(t, 1) if (t := ctx.callee(call)) is not None else [])]
        if any(ctx.is_backward(c) or ctx.is_optimizer_step(c) for c in reached):
            return True
    return False


def _saved_incremented(ctx: FileContext, scope: ast.AST, key: str) -> bool:
    """Some save of ``scope`` (or of the functions of this file it calls) writes ``{key: epoch + 1}``."""
    return any(isinstance(v, ast.BinOp) for c in ctx.reached_calls(scope, 1) for v in _saved_entries(ctx, c, key))
