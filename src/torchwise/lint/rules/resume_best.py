"""TW159: a resume that reads the best checkpoint back instead of the last one.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "import torch\\n"
...     "if args.resume:\\n"
...     "    checkpoint = torch.load(args.resume + '/model_best.pth.tar')\\n"
...     "    start_epoch = checkpoint['epoch']\\n"
...     "    model.load_state_dict(checkpoint['state_dict'])\\n"
...     "for epoch in range(start_epoch, args.epochs):\\n"
...     "    loss = model(x).sum()\\n"
...     "    loss.backward()\\n"
...     "    optimizer.step()\\n"
... )
>>> [(f.code, f.line) for f in lint_source(src) if f.code == "TW159"]
[('TW159', 3)]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext, position
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.checkpoint import file_argument
from torchwise.lint.rules.resume_count import continues_count, resumed_counters
from torchwise.lint.rules.resume_own import torch_loads_feeding
from torchwise.lint.rules.resume_sites import in_resume, restores_weights, trains_after

_BEST = re.compile(r"best", re.I)
# Entries that say where a run stood: a resume reads them, a warm start from the best weights does not.
_RUN_POSITION = re.compile(r"epoch|step|iter|episode", re.I)


@rule("TW159", Level.WARNING, hint="resume from the last checkpoint; keep the best one for evaluation")
def resume_from_best(ctx: FileContext) -> Iterator[Hit]:
    """A resume that reads the best checkpoint back instead of the last one.

    Why: the best checkpoint is the epoch with the best validation score, not where the run stopped;
    a resume from it throws away every epoch trained after it, trains them again, and logs them
    twice (convNet.pytorch's ``--resume`` of a results folder loads ``model_best.pth.tar``).
    Fix: save the last state every epoch (``checkpoint.pth.tar``) and resume from that; keep the
    best one for evaluation.
    It reports the statement that names the best file (a string with "best" in the path that a
    ``torch.load`` reads, written in the call or given to the path's name earlier in the same
    function) where the load feeds a weights restore that resumes (a resume branch, or a branch
    that sets the count training continues from), the loaded checkpoint's epoch or step is read,
    and training follows (a backward or a step here, or a loop that counts on from the resumed
    number around a trainer of another file).
    Cannot see: a best file named without "best" (``checkpoint_{best_epoch}.pth``), a path chosen
    in another file, or a script whose only checkpoint is its best one by design (then the finding
    says what a resume from it loses).
    """
    reported: set[int] = set()
    for load in ctx.calls:
        if not (restores_weights(ctx, load) and (in_resume(ctx, load) or continues_count(ctx, load))):
            continue
        if not (trains_after(ctx, ctx.scope_of(load), load) or _counts_on_after(ctx, load)):
            continue
        for read in torch_loads_feeding(ctx, load):
            if not _reads_run_position(ctx, read):
                continue
            named = _best_named(ctx, read)
            if named is not None and id(named) not in reported:
                reported.add(id(named))
                yield Hit(named, "the resume reads the best checkpoint, not the last: the epochs after it are lost")


def _best_named(ctx: FileContext, read: ast.Call) -> ast.stmt | ast.Call | None:
    """The statement whose string names the best file that ``read`` loads: the load itself, or an
    assignment earlier in its function to a name its path is made of."""
    path = file_argument(read)
    if path is None:
        return None
    if _says_best(path):
        return ctx.statement(read) or read
    names = {dotted(n) for n in ast.walk(path) if isinstance(n, ast.Name)} - {None}
    scope = ctx.scope_of(read)
    for node in ctx.walk(scope):
        if not (isinstance(node, ast.Assign) and position(node) < position(read)):
            continue
        if names & {dotted(t) for t in node.targets} and _says_best(node.value):
            return node
    return None


def _says_best(node: ast.expr) -> bool:
    """A string in the path naming the best file, with no choice between files (no ``a if c else b``)."""
    if any(isinstance(n, ast.IfExp) for n in ast.walk(node)):
        return False
    return any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and _BEST.search(n.value) for n in ast.walk(node)
    )


def _reads_run_position(ctx: FileContext, read: ast.Call) -> bool:
    """The loaded checkpoint's epoch or step is read (``checkpoint['epoch']``): the load continues a run."""
    statement = ctx.statement(read)
    if not (isinstance(statement, ast.Assign) and statement.value is read and len(statement.targets) == 1):
        return False
    name = dotted(statement.targets[0])
    return any(
        isinstance(n, ast.Subscript)
        and dotted(n.value) == name
        and isinstance(n.slice, ast.Constant)
        and _RUN_POSITION.search(str(n.slice.value))
        for n in ctx.walk(ctx.scope_of(read))
    )


def _counts_on_after(ctx: FileContext, load: ast.Call) -> bool:
    """A loop after ``load`` in its scope counts on from a number the resume set (convNet.pytorch's
    ``for epoch in range(args.start_epoch, args.epochs)`` around ``trainer.train(...)``, a trainer of
    another file): the run continues even where lint cannot see its backward."""
    counters = resumed_counters(ctx)
    for loop in ctx.walk(ctx.scope_of(load)):
        if not (isinstance(loop, ast.For) and position(loop) > position(load)):
            continue
        walked = loop.iter
        if isinstance(walked, ast.Call) and dotted(walked.func) == "range" and len(walked.args) >= 2:
            start = walked.args[0]
            if any(dotted(n) in counters for n in ast.walk(start) if isinstance(n, ast.Name | ast.Attribute)):
                return True
    return False
