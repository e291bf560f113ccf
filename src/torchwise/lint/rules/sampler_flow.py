"""Where a sampler or a loader goes after it is built, for TW149: a name given it inside a tuple
assignment (flowtron's ``train_sampler, shuffle = DistributedSampler(trainset), False``), and the
name a caller gives a loader that a function of this file returns (``train_loader, valset,
collate_fn = prepare_dataloaders(...)``)."""

from __future__ import annotations

import ast

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext
from torchwise.lint.rules.callers import call_sites


def tuple_holder(ctx: FileContext, node: ast.expr) -> str | None:
    """``x`` of ``x, y = node, other``: the target at the value's place in a tuple assignment."""
    parent = ctx.parents.get(node)
    if not isinstance(parent, ast.Tuple):
        return None
    statement = ctx.parents.get(parent)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target = statement.targets[0]
    if isinstance(target, ast.Tuple) and len(target.elts) == len(parent.elts):
        return dotted(target.elts[parent.elts.index(node)])
    return None


def returned_as(ctx: FileContext, name: str, holder: ast.AST) -> list[str]:
    """The names the callers of the function around ``holder`` give to ``name`` when the
    function returns it (alone, or at a place of a returned tuple that the caller unpacks)."""
    function = ctx.function(holder)
    if function is None:
        return []
    places: set[int | None] = set()
    for node in ctx.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            if dotted(node.value) == name:
                places.add(None)
            elif isinstance(node.value, ast.Tuple):
                places |= {i for i, e in enumerate(node.value.elts) if dotted(e) == name}
    names: list[str] = []
    for site in call_sites(ctx, function):
        statement = ctx.parents.get(site)
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target = statement.targets[0]
        for place in places:
            if place is None and dotted(target):
                names.append(dotted(target) or "")
            elif place is not None and isinstance(target, ast.Tuple) and place < len(target.elts):
                names.append(dotted(target.elts[place]) or "")
    return [n for n in names if n]


def distributed_sampler_helper(ctx: FileContext, call: ast.Call) -> bool:
    """A function of another file named for a sampler and told to distribute (vq-vae-2's
    ``dist.data_sampler(dataset, shuffle=True, distributed=args.distributed)``): most likely a
    DistributedSampler, which this file cannot see."""
    if ctx.callee(call) is not None or "sampler" not in (dotted(call.func) or "").rsplit(".", 1)[-1].lower():
        return False
    told = [k.value for k in call.keywords if k.arg and "distributed" in k.arg.lower()]
    return any(not (isinstance(v, ast.Constant) and not v.value) for v in told)
