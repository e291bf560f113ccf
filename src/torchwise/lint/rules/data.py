"""Rules about data: DataLoader workers and the main guard, seeded splits, shuffling."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword, method
from torchwise.lint.context import FileContext, is_main_guard
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule


def is_dataloader(ctx: FileContext, call: ast.Call) -> bool:
    """torch's DataLoader itself; a subclass defined here may set its own sampler and workers."""
    name = ctx.qualname(call.func) or ""
    return name.endswith("DataLoader") and name.rsplit(".", 1)[-1] not in _local_classes(ctx)


def _local_classes(ctx: FileContext) -> frozenset[str]:
    return ctx.memo("classes", lambda: frozenset(n.name for n in ctx.nodes if isinstance(n, ast.ClassDef)))


def argparse_option(ctx: FileContext, option: str) -> ast.Call | None:
    """The ``add_argument("--n-cpu", ...)`` call that declares ``args.n_cpu``, or None."""
    for call in ctx.calls:
        if method(call) != "add_argument":
            continue
        dest = keyword(call, "dest")
        names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        declared = {n.lstrip("-").replace("-", "_") for n in names if n.startswith("--")}
        if isinstance(dest, ast.Constant):
            declared = {str(dest.value)}
        if option in declared:
            return call
    return None


def argparse_default(ctx: FileContext, option: str) -> ast.expr | None | bool:
    """The ``default=`` of ``add_argument("--n-cpu", ...)`` for ``args.n_cpu``; False when no
    such argument is declared here."""
    call = argparse_option(ctx, option)
    return False if call is None else keyword(call, "default")


def _positive_workers(ctx: FileContext, value: ast.expr | None) -> bool:
    """Whether ``num_workers`` may start workers: a positive number, a CPU count, or a value
    read from the command line or a config whose default is not 0."""
    if value is None:
        return False
    if isinstance(value, ast.Name):
        assigned = ctx.assignments.get(value.id, [])
        return len(assigned) <= 1 and (not assigned or _positive_workers(ctx, assigned[0]))
    if isinstance(value, ast.Constant):
        return isinstance(value.value, int) and not isinstance(value.value, bool) and value.value > 0
    if isinstance(value, ast.Attribute):
        default = argparse_default(ctx, value.attr)
        return default is False or default is None or _positive_workers(ctx, default)
    return not isinstance(value, ast.BoolOp | ast.IfExp | ast.Compare)


def _runs_at_import(ctx: FileContext, node: ast.AST) -> bool:
    """Whether ``node`` runs when the file is imported: module level outside the main guard,
    or in a local function that module-level code calls."""
    function = ctx.function(node)
    if function is None:
        top = node
        while ctx.parents.get(top) is not ctx.tree and ctx.parents.get(top) is not None:
            top = ctx.parents[top]
        return not is_main_guard(top)
    reached = ctx.memo(
        "import_time_functions",
        lambda: {ctx.callee(c) for c, _ in ctx.import_time_calls()} - {None},
    )
    return function in reached


def _loader_names(ctx: FileContext, call: ast.Call) -> set[str]:
    """The names a DataLoader ends up in: ``loader = DataLoader(...)``, or, when a helper
    returns it, the names assigned from calls to that helper."""
    statement = ctx.statement(call)
    if isinstance(statement, ast.Assign):
        return {dotted(t) or "" for t in statement.targets} - {""}
    function = ctx.function(call)
    if isinstance(statement, ast.Return) and function is not None:
        sites = (c for c in ctx.calls if ctx.callee(c) is function)
        return set().union(*(_loader_names(ctx, site) for site in sites))
    return set()


def _iteration_at_import(ctx: FileContext, names: set[str]) -> ast.AST | None:
    """The first place that iterates one of ``names`` while importing; failing that, one that
    iterates any loader (a helper's ``for x in loader`` over the loader passed in)."""
    iterations = []
    for node in ctx.nodes:
        if isinstance(node, ast.For | ast.AsyncFor):
            iterations.append((node, node.iter))
        elif isinstance(node, ast.Call) and dotted(node.func) in {"iter", "next", "list"}:
            iterations.append((node, node))
    for by_name in (True, False):
        for node, iterable in iterations:
            parameters = set() if by_name else _handed_in(ctx, ctx.function(node), names)
            mentions = any(
                dotted(n) in names if by_name else n.id in parameters and ctx.kind(n) == "loader"
                for n in ast.walk(iterable)
                if isinstance(n, ast.Name | ast.Attribute) and (by_name or isinstance(n, ast.Name))
            )
            if mentions and _runs_at_import(ctx, node):
                return node
    return None


def _handed_in(ctx: FileContext, function: ast.FunctionDef | ast.AsyncFunctionDef | None, names: set[str]) -> set[str]:
    """The function's parameters, if some call hands it one of ``names`` (else none)."""
    if function is None:
        return set()
    sites = (c for c in ctx.calls if ctx.callee(c) is function)
    handed = any(dotted(a) in names for site in sites for a in [*site.args, *(k.value for k in site.keywords)])
    return {a.arg for a in function.args.args + function.args.kwonlyargs} if handed else set()


@rule("TW109", Level.WARNING, hint='put the entry point under `if __name__ == "__main__":`')
def workers_without_main_guard(ctx: FileContext) -> Iterator[Hit]:
    """DataLoader workers started at import time, without a ``__main__`` guard.

    Why: on macOS and Windows (and with the ``spawn`` start method anywhere) each worker
    imports this script again; without the guard the import starts training again and
    Python stops with "An attempt has been made to start a new process before the current
    process has finished its bootstrapping phase".
    Fix: move the code that runs into ``main()`` and call it under
    ``if __name__ == "__main__":``.
    Cannot see: loaders iterated in another file or through a container; ``num_workers``
    from a config file counts as "may start workers" unless its argparse default is 0. A
    loader only *built* at import time starts nothing and is not reported.
    """
    for call, _ in ctx.import_time_calls():
        if not is_dataloader(ctx, call) or not _positive_workers(ctx, keyword(call, "num_workers")):
            continue
        iterated = _iteration_at_import(ctx, _loader_names(ctx, call))
        if iterated is not None:
            yield Hit(
                call,
                f"DataLoader worker processes start at import time (iterated on line {iterated.lineno})",
            )


@rule("TW121", Level.WARNING, hint="random_split(..., generator=torch.Generator().manual_seed(0))")
def unseeded_random_split(ctx: FileContext) -> Iterator[Hit]:
    """``random_split(...)`` without a seeded ``generator=``.

    Why: the split draws from the global RNG, so any change before it (a new model, an
    extra random call) moves samples between train and validation: metrics are not
    comparable across runs and a resumed run validates on training data.
    Fix: ``generator=torch.Generator().manual_seed(seed)``.
    A file that calls ``torch.manual_seed`` (or a seeding helper: ``set_seed``,
    ``seed_everything``) makes the split repeatable: it is then reported as info (the split
    still moves when code before it draws more random numbers).
    Cannot see: a seed set in another file under a name without "seed" in it.
    """
    seeded = any(_seeds_torch(ctx.qualname(c.func) or "") for c in ctx.calls)
    for call in ctx.calls:
        if not (ctx.qualname(call.func) or "").endswith("random_split"):
            continue
        generator = keyword(call, "generator") or (call.args[2] if len(call.args) > 2 else None)
        unseeded = isinstance(generator, ast.Call) and method(generator) != "manual_seed"
        if not (generator is None or unseeded):
            continue
        if seeded:
            message = "random_split draws from the global RNG: the seed makes it repeatable, but any"
            yield Hit(call, f"{message} random call added before it moves samples between the splits", level=Level.INFO)
        else:
            yield Hit(call, "random_split without a seeded generator changes the split every run")


def _seeds_torch(name: str) -> bool:
    """``torch.manual_seed`` or a helper named for seeding (``set_seed``); not ``random.seed``,
    numpy's, a generator's own ``g.manual_seed`` or ``torch.cuda.manual_seed_all``."""
    if name.startswith(("random.", "numpy.", "np.")):
        return False
    last = name.rsplit(".", 1)[-1].lower()
    if last in {"manual_seed", "manual_seed_all"}:
        return name == "torch.manual_seed"
    return "seed" in last


def _is_training_loader(ctx: FileContext, call: ast.Call) -> bool:
    statement = ctx.parents.get(call)
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    dataset = keyword(call, "dataset") or (call.args[0] if call.args else None)
    names = [dotted(t) or "" for t in targets]
    if isinstance(dataset, ast.Subscript) and isinstance(dataset.slice, ast.Constant):
        names.append(str(dataset.slice.value))
    elif dataset is not None:
        names.append(dotted(dataset) or "")
    return any("train" in n.lower() for n in names) and not (
        _is_iterable(ctx, dataset) or _ignores_its_index(ctx, dataset)
    )


def _ignores_its_index(ctx: FileContext, dataset: ast.expr | None) -> bool:
    """A dataset class defined here whose ``__getitem__`` never reads its index (it draws a
    random window itself, as x-transformers' ``TextSamplerDataset``): order means nothing."""
    built = ctx.constructor(dataset) if dataset is not None else None
    for node in ctx.nodes:
        if not (isinstance(node, ast.ClassDef) and built and node.name == built.rsplit(".", 1)[-1]):
            continue
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__getitem__" and len(item.args.args) == 2:
                index = item.args.args[1].arg
                return not any(isinstance(n, ast.Name) and n.id == index for n in ast.walk(item))
    return False


_RESAMPLING = frozenset({"make_private", "make_private_with_epsilon"})


def _resampled_later(ctx: FileContext, call: ast.Call) -> bool:
    """The loader goes to Opacus' ``make_private``, which hands back a Poisson-sampled loader
    in its place: any order the original had is not the one training sees."""
    statement = ctx.statement(call)
    names = {dotted(t) for t in statement.targets} if isinstance(statement, ast.Assign) else set()
    return any(
        method(c) in _RESAMPLING and any(dotted(v) in names for v in [*c.args, *(k.value for k in c.keywords)])
        for c in ctx.calls
    )


def _is_iterable(ctx: FileContext, dataset: ast.expr | None) -> bool:
    """An IterableDataset cannot be shuffled by the DataLoader: it orders its own stream."""
    built = ctx.constructor(dataset) if dataset is not None else None
    if built is None:
        return False
    iterable_classes = {
        node.name
        for node in ctx.nodes
        if isinstance(node, ast.ClassDef) and any((dotted(b) or "").endswith("IterableDataset") for b in node.bases)
    }
    last = built.rsplit(".", 1)[-1]
    return last in iterable_classes or "Iterable" in last or "Stream" in last


_ORDER_KEYS = frozenset({"shuffle", "sampler", "batch_sampler"})


def _dict_keys(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Dict):
        return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    if isinstance(node, ast.Call) and dotted(node.func) == "dict":
        return {k.arg for k in node.keywords if k.arg}
    return set()


def _shuffled_only_when(ctx: FileContext, spread: ast.expr) -> str | None:
    """For ``DataLoader(ds, **kwargs)`` with ``kwargs`` built here: the ``if`` test under which
    alone a ``.update()`` adds shuffle or a sampler; None when it always does or when the
    dict cannot be read (a parameter, built elsewhere)."""
    name = dotted(spread)
    built = ctx.assignments.get(name or "", [])
    if len(built) != 1 or not _dict_keys(built[0]) and not isinstance(built[0], ast.Dict):
        return None
    if _dict_keys(built[0]) & _ORDER_KEYS:
        return None
    conditions = []
    for call in ctx.calls:
        if method(call) != "update" or dotted(call.func.value) != name or not call.args:  # type: ignore[attr-defined]
            continue
        added = _dict_keys(call.args[0]) | _dict_keys(_value_of(ctx, call.args[0]))
        if not added & _ORDER_KEYS:
            continue
        guard = next((a for a in ctx.ancestors(call) if isinstance(a, ast.If)), None)
        if guard is None:
            return None
        conditions.append(ast.unparse(guard.test))
    return conditions[0] if conditions else None


def _value_of(ctx: FileContext, node: ast.expr) -> ast.AST:
    values = ctx.assignments.get(dotted(node) or "", [])
    return values[-1] if values else node


@rule("TW122", Level.INFO, hint="DataLoader(train_set, shuffle=True, ...) or pass a sampler")
def training_loader_not_shuffled(ctx: FileContext) -> Iterator[Hit]:
    """The training DataLoader is built without ``shuffle=True`` or a sampler.

    Why: batches come in the same order every epoch (often sorted by class or by file
    name), which biases the gradient and hurts convergence.
    Fix: ``shuffle=True`` (or a ``DistributedSampler`` / other sampler under DDP).
    Cannot see: ``**kwargs`` built elsewhere (not reported; a dict built here is read, and
    ``shuffle`` added only under an ``if`` is reported), a subclass of DataLoader defined
    here (not reported), or a dataset that shuffles itself in another file; it knows a
    training loader by "train" in its name or its dataset's. Not reported: a dataset class
    defined here whose ``__getitem__`` ignores its index (it draws its own sample), and a
    loader handed to Opacus' ``make_private`` (replaced by Poisson sampling).
    """
    for call in ctx.calls:
        if not is_dataloader(ctx, call) or not _is_training_loader(ctx, call):
            continue
        spread = [k.value for k in call.keywords if k.arg is None]
        if spread:
            condition = _shuffled_only_when(ctx, spread[0])
            if condition:
                yield Hit(
                    call,
                    f"training DataLoader shuffles only when {condition}: on the "
                    "other path every epoch sees the same order",
                )
            continue
        if keyword(call, "sampler") is not None or keyword(call, "batch_sampler") is not None:
            continue
        shuffle = keyword(call, "shuffle") or (call.args[2] if len(call.args) > 2 else None)
        if (shuffle is None or is_constant(shuffle, False)) and not _resampled_later(ctx, call):
            yield Hit(call, "training DataLoader without shuffle=True")
