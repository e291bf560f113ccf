"""TW161: an evaluation DataLoader built with ``shuffle=True``.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "test_loader = DataLoader(test_set, shuffle=True)\\n"
...     "for i, (x, y) in enumerate(test_loader):\\n"
...     "    if i == 10:\\n"
...     "        break\\n"
... )
>>> [(f.code, f.line, f.level.value) for f in lint_source(src) if f.code == "TW161"]
[('TW161', 1, 'warning')]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.forward_flow import EVAL_DATA_WORDS


@rule("TW161", Level.WARNING, hint="DataLoader(val_set, shuffle=False): evaluate every sample in a fixed order")
def evaluation_loader_shuffled(ctx: FileContext) -> Iterator[Hit]:
    """An evaluation DataLoader built with ``shuffle=True``.

    Why: shuffling a validation or test set changes nothing a full pass measures, but it makes the
    order (and anything saved per batch) differ between runs; where the evaluation stops after a
    number of batches (``if i == max_it: break``) each epoch's score comes from a different random
    subset, so scores are not comparable between epochs and a plateau scheduler or best-model
    choice fed by them follows noise (Attention-Gated-Networks' ``train_classifaction.py``).
    Fix: ``shuffle=False`` for validation and test loaders (and evaluate the whole set).
    It knows an evaluation loader by the name it is bound to or by its dataset's name (``val``,
    ``valid``, ``test``, ``eval``), or a torchvision dataset built with ``train=False``, and reports
    it where a loop over the loader leaves early with a ``break`` under a test of the loop's own
    counter; a full pass over a shuffled set is not reported (its scores do not change).
    A loader only drawn from with ``next(iter(loader))`` (a random batch of samples) is left alone.
    Cannot see: a shuffled set handed to a function that stops early (the loop's loader is then a
    parameter), loaders built in another file or through ``**kwargs`` built elsewhere, an early
    stop made by ``itertools.islice`` or a helper, or a loop over the loader in another file.
    """
    for node in ctx.nodes:
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        call = node.value
        if not (ctx.qualname(call.func) or dotted(call.func) or "").endswith("DataLoader"):
            continue
        if not is_constant(keyword(call, "shuffle"), True):
            continue
        names = [d for t in node.targets if (d := dotted(t))]
        if not (any(EVAL_DATA_WORDS.search(n.rsplit(".", 1)[-1]) for n in names) or _evaluation_dataset(ctx, call)):
            continue
        if any("train" in n.lower() for n in names) or _sampled(ctx, names):
            continue
        subset = _stops_early(ctx, names)
        if subset is None:
            continue  # a full pass: the order changes no score
        where = f"line {subset.lineno} stops the pass early, so each evaluation scores another random subset"
        shuffle = keyword(call, "shuffle")
        yield Hit(
            shuffle or call, f"{names[0] if names else 'an evaluation loader'} shuffles an evaluation set; {where}"
        )


def _sampled(ctx: FileContext, names: list[str]) -> bool:
    """``next(iter(val_dataloader))``: a random batch drawn for samples (pix2pix's
    ``sample_images``), where the shuffle is the point."""
    return any(dotted(c.func) == "iter" and c.args and dotted(c.args[0]) in names for c in ctx.calls)


def _evaluation_dataset(ctx: FileContext, call: ast.Call) -> bool:
    dataset = keyword(call, "dataset") or (call.args[0] if call.args else None)
    if dataset is None:
        return False
    name = dotted(dataset)
    if name is not None:
        return bool(EVAL_DATA_WORDS.search(name.rsplit(".", 1)[-1]))
    return isinstance(dataset, ast.Call) and is_constant(keyword(dataset, "train"), False)


def _stops_early(ctx: FileContext, names: list[str]) -> ast.Break | None:
    """A ``break`` in a loop over the loader (directly, through ``enumerate``/``tqdm``, or a loop
    variable that takes the loader from a list: ``for loader in [valid_loader, test_loader]``)."""
    aliases = set(names)
    for loop in (n for n in ctx.nodes if isinstance(n, ast.For)):
        if isinstance(loop.iter, ast.Call | ast.List | ast.Tuple) and any(
            dotted(x) in aliases for x in ast.walk(loop.iter) if isinstance(x, ast.Name | ast.Attribute)
        ):
            aliases |= {d for x in ast.walk(loop.target) if (d := dotted(x))}
    for loop in (n for n in ctx.nodes if isinstance(n, ast.For)):
        over = {dotted(x) for x in ast.walk(loop.iter) if isinstance(x, ast.Name | ast.Attribute)}
        if over & aliases and not isinstance(loop.iter, ast.List | ast.Tuple):
            counters = {d for x in ast.walk(loop.target) if (d := dotted(x))}
            for inner in ast.walk(loop):
                if isinstance(inner, ast.Break) and ctx.loops(inner)[:1] == [loop] and _counted(ctx, inner, counters):
                    return inner
    return None


def _counted(ctx: FileContext, stop: ast.Break, counters: set[str]) -> bool:
    """The ``break`` sits under an ``if`` that compares the loop's own counter (``if max_it ==
    epoch_iter:``): the pass stops after so many batches. A ``--dry-run`` flag is not a count."""
    for ancestor in ctx.ancestors(stop):
        if isinstance(ancestor, ast.If):
            compared = {dotted(x) for c in ast.walk(ancestor.test) if isinstance(c, ast.Compare) for x in ast.walk(c)}
            if compared & counters:
                return True
    return False
