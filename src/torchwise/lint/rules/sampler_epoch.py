"""TW149: a shuffling DistributedSampler whose loader is walked every epoch without ``set_epoch``.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "from torch.utils.data import DataLoader\\n"
...     "from torch.utils.data.distributed import DistributedSampler\\n"
...     "sampler = DistributedSampler(train_set)\\n"
...     "loader = DataLoader(train_set, batch_size=32, sampler=sampler)\\n"
...     "for epoch in range(10):\\n"
...     "    for x, y in loader:\\n"
...     "        step(x, y)\\n"
... )
>>> [(f.code, f.line) for f in lint_source(src)]
[('TW149', 3)]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword, method
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.callers import handed_params
from torchwise.lint.rules.data import is_dataloader
from torchwise.lint.rules.eval_loader import names_evaluation as _names_evaluation
from torchwise.lint.rules.sampler_flow import distributed_sampler_helper, returned_as, tuple_holder


@rule("TW149", Level.WARNING, hint="call sampler.set_epoch(epoch) at the start of every epoch")
def sampler_epoch_never_set(ctx: FileContext) -> Iterator[Hit]:
    """A shuffling ``DistributedSampler`` whose loader runs every epoch with no ``set_epoch``.

    Why: DistributedSampler shuffles with a seed plus the epoch it was last given; without
    ``sampler.set_epoch(epoch)`` every epoch walks each rank's shard in the same order (the
    PyTorch docs say so), so the model sees one fixed order for the whole run (NVIDIA's
    tacotron2 and waveglow, the FSDP T5 example).
    Fix: ``sampler.set_epoch(epoch)`` at the top of the epoch loop, before the loader is iterated.
    It reports a ``DistributedSampler(...)`` built here without ``shuffle=False`` and handed to a
    DataLoader of this file that a loop walks inside another loop (or that a function of this
    file walks, called from a loop), in a file with no ``set_epoch`` call at all. The sampler may
    be given in a tuple assignment and the loader returned by a function of this file to a caller
    that walks it (flowtron's ``prepare_dataloaders``).
    A function of another file named for a sampler and told ``distributed=`` (vq-vae-2's
    ``dist.data_sampler``) is reported as info: what it builds is not seen here.
    Cannot see: samplers built inside a loader helper of another file (diffwave's ``from_path``), a
    ``set_epoch`` made in another file (a trainer given the loader), or an epoch loop in another
    file.
    """
    if any(method(c) == "set_epoch" for c in ctx.calls):
        return
    for call in ctx.calls:
        helper = distributed_sampler_helper(ctx, call)
        if (ctx.qualname(call.func) or "").rsplit(".", 1)[-1] != "DistributedSampler" and not helper:
            continue
        if keyword(call, "shuffle") is not None and not is_constant(keyword(call, "shuffle"), True):
            continue  # shuffle=False (or a flag): the order is meant to stay, or may
        loader = _loader_of(ctx, call)
        holder = _name_holding(ctx, call)
        if loader is None or _names_evaluation(loader) or (holder and _handed_away(ctx, holder)):
            continue  # an evaluation's order changes nothing; a trainer of another file may set it
        if not any(_walked_every_epoch(ctx, name) for name in [loader, *returned_as(ctx, loader, call)]):
            continue
        if helper:  # info: what the helper of another file builds is not seen here
            what = f"{ast.unparse(call.func)}(...) builds a sampler for distributed runs; no set_epoch() here"
            same = f"if it is a DistributedSampler, loader {loader} runs the same order every epoch"
            yield Hit(call, f"{what}: {same}", level=Level.INFO)
        else:
            yield Hit(
                call, f"DistributedSampler never given set_epoch(): loader {loader} runs the same order every epoch"
            )


def _handed_away(ctx: FileContext, name: str) -> bool:
    """The sampler given to a function that is not defined here (nor a DataLoader)."""
    for call in ctx.calls:
        given = [*call.args, *(k.value for k in call.keywords)]
        if any(dotted(a) == name for a in given) and not is_dataloader(ctx, call) and ctx.callee(call) is None:
            return True
    return False


def _loader_of(ctx: FileContext, sampler: ast.Call) -> str | None:
    """The name of the DataLoader this sampler goes into."""
    holder = _name_holding(ctx, sampler)
    helper = _helper_returning(ctx, sampler)
    for call in ctx.calls:
        if not is_dataloader(ctx, call):
            continue
        given = _sampler_given(ctx, call)
        if given is None:
            continue
        if (
            any(n is sampler for n in ast.walk(given))
            or (holder and dotted(given) == holder)
            or (helper and isinstance(given, ast.Call) and dotted(given.func) == helper)
        ):
            return _name_holding(ctx, call)
    return None


def _sampler_given(ctx: FileContext, loader: ast.Call) -> ast.expr | None:
    """``sampler=`` of the call, or of a dict literal handed as ``**train_kwargs`` (the FSDP T5
    example's ``train_kwargs = {'batch_size': ..., 'sampler': sampler1}``)."""
    given = keyword(loader, "sampler")
    if given is not None:
        return given
    for extra in (k.value for k in loader.keywords if k.arg is None):
        for value in ctx.assignments.get(dotted(extra) or "", []):
            if isinstance(value, ast.Dict):
                for key, item in zip(value.keys, value.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "sampler":
                        return item
    return None


def _helper_returning(ctx: FileContext, sampler: ast.Call) -> str | None:
    """``def data_sampler(...): return DistributedSampler(...)`` (stylegan2-pytorch)."""
    parent = ctx.parents.get(sampler)
    function = ctx.function(sampler)
    return function.name if isinstance(parent, ast.Return) and function is not None else None


def _name_holding(ctx: FileContext, node: ast.expr) -> str | None:
    """``x`` of ``x = node`` (also ``x = node if cond else None``)."""
    parent = ctx.parents.get(node)
    if isinstance(parent, ast.IfExp):
        parent = ctx.parents.get(parent)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
        return dotted(parent.targets[0])
    return tuple_holder(ctx, node)  # train_sampler, shuffle = DistributedSampler(trainset), False


def _iterates(loop: ast.For, name: str) -> bool:
    """``for batch in loader`` / ``enumerate(loader)`` / ``tqdm(loader)``."""
    return any(dotted(n) == name for n in ast.walk(loop.iter))


def _walked_every_epoch(ctx: FileContext, name: str) -> bool:
    for loop in (n for n in ctx.nodes if isinstance(n, ast.For)):
        if _iterates(loop, name) and ctx.loops(loop):
            return True
    # train(args, model, train_loader, ...) called in the epoch loop, walking its parameter.
    for call in ctx.calls:
        target = ctx.callee(call)
        if target is None:
            continue
        for param in handed_params(call, target, name):
            loops = [n for n in ctx.walk(target) if isinstance(n, ast.For) and _iterates(n, param)]
            # Called in the epoch loop, or an endless generator (`while True: for b in loader`).
            if loops and (ctx.loops(call) or any(ctx.loops(n) for n in loops)):
                return True
    return False
