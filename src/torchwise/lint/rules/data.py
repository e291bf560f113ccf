"""Rules about data: DataLoader workers and the main guard, seeded splits, shuffling."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.context import (
    FileContext,
    dotted,
    is_constant,
    keyword,
    method,
)
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule


def _is_dataloader(ctx: FileContext, call: ast.Call) -> bool:
    return (ctx.qualname(call.func) or "").endswith("DataLoader")


def _positive_workers(ctx: FileContext, value: ast.expr | None) -> bool:
    """Whether ``num_workers`` is (or was assigned) a positive number or a CPU count."""
    if value is None:
        return False
    if isinstance(value, ast.Name):
        assigned = ctx.assignments.get(value.id, [])
        return len(assigned) == 1 and _positive_workers(ctx, assigned[0])
    if isinstance(value, ast.Constant):
        return (
            isinstance(value.value, int) and not isinstance(value.value, bool) and value.value > 0
        )
    return isinstance(value, ast.Call) and (dotted(value.func) or "").endswith("cpu_count")


@rule("TW109", Level.WARNING, hint='put the entry point under `if __name__ == "__main__":`')
def workers_without_main_guard(ctx: FileContext) -> Iterator[Hit]:
    """``DataLoader(num_workers>0)`` reached at import time, without a ``__main__`` guard.

    Why: on macOS and Windows (and with the ``spawn`` start method anywhere) each worker
    imports this script again; without the guard the import starts training again and
    Python stops with "An attempt has been made to start a new process before the current
    process has finished its bootstrapping phase".
    Fix: move the code that runs into ``main()`` and call it under
    ``if __name__ == "__main__":``.
    """
    for call, entry in ctx.import_time_calls():
        if _is_dataloader(ctx, call) and _positive_workers(ctx, keyword(call, "num_workers")):
            via = "" if entry is call else f" (reached from line {entry.lineno})"
            yield Hit(call, f"DataLoader with worker processes runs at import time{via}")


@rule("TW121", Level.WARNING, hint="random_split(..., generator=torch.Generator().manual_seed(0))")
def unseeded_random_split(ctx: FileContext) -> Iterator[Hit]:
    """``random_split(...)`` without a seeded ``generator=``.

    Why: the split draws from the global RNG, so any change before it (a new model, an
    extra random call) moves samples between train and validation: metrics are not
    comparable across runs and a resumed run validates on training data.
    Fix: ``generator=torch.Generator().manual_seed(seed)``.
    """
    for call in ctx.calls:
        if not (ctx.qualname(call.func) or "").endswith("random_split"):
            continue
        generator = keyword(call, "generator") or (call.args[2] if len(call.args) > 2 else None)
        unseeded = isinstance(generator, ast.Call) and method(generator) != "manual_seed"
        if generator is None or unseeded:
            yield Hit(call, "random_split without a seeded generator changes the split every run")


def _is_training_loader(ctx: FileContext, call: ast.Call) -> bool:
    statement = ctx.parents.get(call)
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    dataset = keyword(call, "dataset") or (call.args[0] if call.args else None)
    names = [dotted(t) or "" for t in targets]
    if isinstance(dataset, ast.Subscript) and isinstance(dataset.slice, ast.Constant):
        names.append(str(dataset.slice.value))
    elif dataset is not None:
        names.append(dotted(dataset) or "")
    return any("train" in n.lower() for n in names) and not _is_iterable(ctx, dataset)


def _is_iterable(ctx: FileContext, dataset: ast.expr | None) -> bool:
    """An IterableDataset cannot be shuffled by the DataLoader: it orders its own stream."""
    built = ctx.constructor(dataset) if dataset is not None else None
    if built is None:
        return False
    iterable_classes = {
        node.name
        for node in ctx.nodes
        if isinstance(node, ast.ClassDef)
        and any((dotted(b) or "").endswith("IterableDataset") for b in node.bases)
    }
    last = built.rsplit(".", 1)[-1]
    return last in iterable_classes or "Iterable" in last or "Stream" in last


@rule("TW122", Level.INFO, hint="DataLoader(train_set, shuffle=True, ...) or pass a sampler")
def training_loader_not_shuffled(ctx: FileContext) -> Iterator[Hit]:
    """The training DataLoader is built without ``shuffle=True`` or a sampler.

    Why: batches come in the same order every epoch (often sorted by class or by file
    name), which biases the gradient and hurts convergence.
    Fix: ``shuffle=True`` (or a ``DistributedSampler`` / other sampler under DDP).
    """
    for call in ctx.calls:
        if not _is_dataloader(ctx, call) or not _is_training_loader(ctx, call):
            continue
        if keyword(call, "sampler") is not None or keyword(call, "batch_sampler") is not None:
            continue
        shuffle = keyword(call, "shuffle") or (call.args[2] if len(call.args) > 2 else None)
        if shuffle is None or is_constant(shuffle, False):
            yield Hit(call, "training DataLoader without shuffle=True")
