"""TW147: an evaluation DataLoader that drops its last partial batch (``drop_last=True``).

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "from torch.utils.data import DataLoader\\n"
...     "train_loader = DataLoader(train_set, batch_size=256, shuffle=True, drop_last=True)\\n"
...     "test_loader = DataLoader(test_set, batch_size=256, shuffle=False, drop_last=True)\\n"
... )
>>> [(f.code, f.line, f.level.value) for f in lint_source(src)]
[('TW147', 3, 'warning')]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.data import argparse_default, is_dataloader

# A split named by a word of its own: `test_loader`, `val_dataset`, `loader_val`, `dev_set`.
_EVAL_WORDS = re.compile(r"(^|_)(val|valid|validation|test|testing|eval|evaluation|dev)(_|$|set|loader|data)", re.I)
_TRAIN_WORDS = re.compile(r"train", re.I)
# Code that needs every batch the same shape: FP8 GEMMs, XLA graphs, CUDA graphs. There a short
# last batch may be dropped on purpose (accelerate's FP8 benchmarks keep batches of 16).
_STATIC_SHAPES = re.compile(r"\bfp8\b|float8|torch_xla|CUDAGraph|cuda_graph|reduce-overhead", re.I)
_EVAL_SPLITS = frozenset({"val", "valid", "validation", "test", "testing", "eval", "dev"})


@rule("TW147", Level.WARNING, hint="drop_last=False for evaluation: every sample must be scored once")
def evaluation_loader_drops_last_batch(ctx: FileContext) -> Iterator[Hit]:
    """An evaluation DataLoader built with ``drop_last=True``.

    Why: the last partial batch of the validation or test set is never scored, so the reported
    metric is over a subset that changes with the batch size (SimCLR's linear evaluation at 256
    leaves out the last 16 CIFAR-10 test images; Informer's test windows; YOLOv4's COCO AP).
    ``drop_last`` keeps the training batches whole; an evaluation has no such need.
    Fix: ``drop_last=False`` (the default) for every loader that is scored.
    It knows an evaluation loader by its name or its dataset's (``test_loader``,
    ``val_dataset``, ``train=False``, ``split="test"``) or by a branch on the split
    (``if flag == 'test': drop_last = True``). It warns where the batch size is known to be
    above one: a literal, an option whose default is, or the same batch size a training loader
    of the file uses; otherwise (a size read from a config file) it says info, since a batch of
    one drops nothing. In a file that needs fixed batch shapes (FP8, XLA, CUDA graphs) it says
    info: the short batch may be dropped on purpose there.
    Cannot see: loaders built in another file, or a dataset whose length is a multiple of the
    batch size (nothing is dropped then); a loader wrapped in an endless generator
    (``cycle(DataLoader(...))``) samples its batches and is not reported.
    """
    loaders = [c for c in ctx.calls if is_dataloader(ctx, c)]
    for call in loaders:
        flag = keyword(call, "drop_last")
        size = keyword(call, "batch_size") or (call.args[1] if len(call.args) > 1 else None)
        if flag is None or _sampled(ctx, call) or size is None or (isinstance(size, ast.Constant) and size.value == 1):
            continue  # a batch of one leaves nothing to drop
        if is_constant(flag, True) and _is_evaluation(ctx, call):
            yield _hit(ctx, call, flag, loaders)
        elif isinstance(flag, ast.Name):
            for value, branch in _split_branch_values(ctx, call, flag.id):
                yield _hit(ctx, call, value, loaders, branch)


def _hit(
    ctx: FileContext, call: ast.Call, where: ast.AST, loaders: list[ast.Call], branch: ast.If | None = None
) -> Hit:
    size = keyword(call, "batch_size") or (call.args[1] if len(call.args) > 1 else None)
    message = "evaluation DataLoader with drop_last=True: the last partial batch is never scored"
    if _STATIC_SHAPES.search(ctx.source):
        reason = "this file needs fixed batch shapes (FP8, XLA or CUDA graphs), so it may be on purpose"
        return Hit(where, f"{message} ({reason})", level=Level.INFO)
    known = _above_one(ctx, call, size, loaders) or (
        branch is not None and isinstance(size, ast.Name) and _shared_with_other_split(branch, size.id)
    )
    if known:
        return Hit(where, message)
    return Hit(where, f"{message} (if its batch size is above 1)", level=Level.INFO)


def _sampled(ctx: FileContext, call: ast.Call) -> bool:
    """``cycle(DataLoader(...))``: batches drawn endlessly, a sampled estimate, not a full pass."""
    parent = ctx.parents.get(call)
    return isinstance(parent, ast.Call) and parent is not call and call in parent.args


def names_evaluation(name: str) -> bool:
    return bool(_EVAL_WORDS.search(name)) and not _TRAIN_WORDS.search(name)


def _is_evaluation(ctx: FileContext, call: ast.Call) -> bool:
    """The loader's target name, or its dataset's name or construction, says validation/test."""
    statement = ctx.statement(call)
    if isinstance(statement, ast.Assign) and statement.value is call:
        names = [dotted(t) or "" for t in statement.targets]
        if any(_TRAIN_WORDS.search(n) for n in names):
            return False
        if any(names_evaluation(n.rsplit(".", 1)[-1]) for n in names):
            return True
    dataset = call.args[0] if call.args else keyword(call, "dataset")
    if dataset is None:
        return False
    name = (dotted(dataset) or "").rsplit(".", 1)[-1]
    if name and names_evaluation(name):
        return True
    built = ctx.assignments.get(dotted(dataset) or "", []) if name else [dataset]
    return any(_evaluation_split(v) for v in built[-1:])


def _evaluation_split(value: ast.expr) -> bool:
    """A dataset built with ``train=False`` or ``split="test"``."""
    if not isinstance(value, ast.Call):
        return False
    train, split = keyword(value, "train"), keyword(value, "split")
    if is_constant(train, False):
        return True
    return isinstance(split, ast.Constant) and str(split.value).lower() in _EVAL_SPLITS


def _shared_with_other_split(branch: ast.If, name: str) -> bool:
    """Informer: the test branch sets ``batch_size = args.batch_size`` as the training branch
    (its ``else``) does: the evaluation gets the training batch size."""
    here = [s.value for s in ast.walk(ast.Module(body=branch.body, type_ignores=[])) if _assigns(s, name)]
    there = [s.value for s in ast.walk(ast.Module(body=branch.orelse, type_ignores=[])) if _assigns(s, name)]
    return any(not isinstance(v, ast.Constant) and ast.dump(v) == ast.dump(w) for v in here for w in there)


def _assigns(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Assign) and any(dotted(t) == name for t in node.targets)


def _split_branch_values(ctx: FileContext, call: ast.Call, name: str) -> Iterator[tuple[ast.AST, ast.If]]:
    """Informer's ``if flag == 'test': drop_last = True`` in the function that builds the loader:
    the True set under a test of the split against an evaluation split's name."""
    scope = ctx.scope_of(call)
    for node in ctx.walk(scope):
        if not (isinstance(node, ast.If) and _compares_to_eval_split(node.test)):
            continue
        for statement in node.body:
            for sub in ast.walk(statement):
                if (
                    isinstance(sub, ast.Assign)
                    and is_constant(sub.value, True)
                    and any(dotted(t) == name for t in sub.targets)
                ):
                    yield sub, node


def _compares_to_eval_split(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, *test.comparators]
    return any(isinstance(s, ast.Constant) and str(s.value).lower() in _EVAL_SPLITS for s in sides)


def _above_one(ctx: FileContext, call: ast.Call, size: ast.expr | None, loaders: list[ast.Call]) -> bool:
    """Whether the batch size is known to be above one: a literal, an argparse default, or the
    batch size a training loader of this file is given too (training batches are never 1)."""
    if size is None:
        return False  # DataLoader's default batch size is 1
    if isinstance(size, ast.Constant):
        return isinstance(size.value, int) and size.value > 1
    if isinstance(size, ast.Attribute):
        default = argparse_default(ctx, size.attr)
        if isinstance(default, ast.Constant) and isinstance(default.value, int):
            return default.value > 1
    if isinstance(size, ast.Name):
        values = [v for v in ctx.assignments.get(size.id, [])]
        if values and all(ast.dump(v) == ast.dump(values[0]) for v in values):
            size = values[0]  # Informer: `batch_size = args.batch_size` on every branch
            if isinstance(size, ast.Constant | ast.Attribute) and _above_one(ctx, call, size, []):
                return True
    text = ast.dump(size)
    for other in loaders:
        if other is call:
            continue
        other_size = keyword(other, "batch_size") or (other.args[1] if len(other.args) > 1 else None)
        if other_size is not None and _is_training(ctx, other) and _same_size(ctx, other_size, text):
            return True
    return False


def _same_size(ctx: FileContext, other: ast.expr, text: str) -> bool:
    if ast.dump(other) == text:
        return True
    if isinstance(other, ast.Name):
        return any(ast.dump(v) == text for v in ctx.assignments.get(other.id, []))
    return False


def _is_training(ctx: FileContext, call: ast.Call) -> bool:
    """A loader that shuffles, or whose name or dataset says train."""
    if is_constant(keyword(call, "shuffle"), True) or keyword(call, "sampler") is not None:
        return True
    statement = ctx.statement(call)
    names = [dotted(t) or "" for t in getattr(statement, "targets", [])]
    dataset = call.args[0] if call.args else keyword(call, "dataset")
    names.append(dotted(dataset) or "" if dataset is not None else "")
    return any(_TRAIN_WORDS.search(n) for n in names)
