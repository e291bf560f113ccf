"""TW153: the test split handed to the validation of the training loop while a validation split is
built and left unused: the model is selected (early stopping, the best checkpoint) on the test set.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "val_loader = make_loader('val')\\n"
...     "test_loader = make_loader('test')\\n"
...     "def validate(model, val_loader):\\n"
...     "    return score(model, val_loader)\\n"
...     "for epoch in range(10):\\n"
...     "    train_epoch(model, train_loader, optimizer)\\n"
...     "    optimizer.step()\\n"
...     "    loss = validate(model, test_loader)\\n"
...     "    early_stopping(loss, model)\\n"
... )
>>> [(f.code, f.line) for f in lint_source(src) if f.code == "TW153"]
[('TW153', 8)]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext, position
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.callers import call_sites

Function = ast.FunctionDef | ast.AsyncFunctionDef
_VALIDATION = re.compile(r"(^|_)(val|vali|valid|validate|validation|dev)(_|$|\d)", re.I)
_TEST = re.compile(r"(^|_)test(_|$|\d)", re.I)


def _last(name: str | None) -> str:
    return (name or "").rsplit(".", 1)[-1]


@rule("TW153", Level.WARNING, hint="validate on the validation split; score the test split once, at the end")
def test_split_selects_the_model(ctx: FileContext) -> Iterator[Hit]:
    """The test split handed to the training loop's validation while a validation split goes unused.

    Why: the score that decides early stopping and which checkpoint is kept is then measured on the
    test set, and the test result reported afterwards is no longer an estimate on unseen data
    (Anomaly-Transformer's solver passes ``self.test_loader`` to ``self.vali`` every epoch and never
    uses the ``self.vali_loader`` it builds).
    Fix: hand the validation loader to the validation; keep the test split for the final test.
    It reports a call, inside a loop that trains (a backward or an optimizer step reached from it), of
    a function of this file named for validation or whose parameter is, given a value named for the
    test split, whose result the loop then compares or hands to an early stopping, best-model or save
    call, in a file that builds data named for validation that no call hands to that function.
    Cannot see: splits named otherwise (``holdout``, ``data[2]``), a selection made in another file,
    or a file with no validation split at all (scoring CIFAR's test set each epoch is common
    practice, and lint cannot tell it from a choice).
    """
    built = _validation_splits(ctx)
    for function in {id(f): f for f in ctx.functions.values()}.values():
        params = [a.arg for a in function.args.args if a.arg not in {"self", "cls"}]
        sites = call_sites(ctx, function)
        unused = [(v, line) for v, line in built if not any(_hands(site, v) for site in sites)]
        if not unused:
            continue
        for site in sites:
            given = [*site.args, *(k.value for k in site.keywords)]
            tested = [g for g in given if _TEST.search(_last(dotted(g)))]
            named = _VALIDATION.search(function.name) or any(_VALIDATION.search(p) for p in params)
            if not (tested and named and _in_training_loop(ctx, site) and _selects(ctx, site)):
                continue
            what = f"{ast.unparse(site)} scores the test split where the training loop validates"
            name, line = unused[0]
            yield Hit(site, f"{what}, while {name} (line {line}) is never used: the test set selects the model")


_DATA = re.compile(r"loader|data|set|dl$|iter", re.I)
_RESULT = re.compile(r"loss|acc|metric|score|err|result|stat", re.I)


def _validation_splits(ctx: FileContext) -> list[tuple[str, int]]:
    """(name, line) of values named for the validation split and for data (``self.vali_loader``,
    ``val_data, val_loader = get_data('val')``), not results (``vali_loss``)."""
    found: dict[str, int] = {}
    for node in ctx.nodes:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            for part in ast.walk(target):
                name = dotted(part) if isinstance(part, ast.Name | ast.Attribute) else None
                last = _last(name)
                if name and _VALIDATION.search(last) and _DATA.search(last) and not _RESULT.search(last):
                    found.setdefault(name, node.lineno)
    return list(found.items())


def _hands(site: ast.Call, name: str) -> bool:
    return any(dotted(a) == name for a in [*site.args, *(k.value for k in site.keywords)])


def _in_training_loop(ctx: FileContext, site: ast.Call) -> bool:
    loops = ctx.loops(site)
    return any(ctx.is_backward(c) or ctx.is_optimizer_step(c) for loop in loops for c in ctx.reached_calls(loop, 1))


_CHOOSES = re.compile(r"stop|best|save|select", re.I)


def _selects(ctx: FileContext, site: ast.Call) -> bool:
    """The call's value, bound to names, is compared later in the loop or handed to an early
    stopping, a best-model or a save call (Anomaly-Transformer's ``early_stopping(vali_loss1, ...)``)."""
    statement = ctx.statement(site)
    if not (isinstance(statement, ast.Assign) and statement.value is site):
        return False
    names = {dotted(n) for t in statement.targets for n in ast.walk(t)} - {None}
    loop = ctx.loops(site)[0]
    later = [n for n in ctx.walk(loop) if position(n) > position(statement)]
    for node in later:
        if isinstance(node, ast.Compare) and any(dotted(n) in names for n in ast.walk(node)):
            return True
        if isinstance(node, ast.Call) and _CHOOSES.search(dotted(node.func) or ""):
            if any(dotted(a) in names for a in [*node.args, *(k.value for k in node.keywords)]):
                return True
    return False
