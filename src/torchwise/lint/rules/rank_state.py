"""TW154: training state that every rank holds, changed on one rank only.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "import torch\\n"
...     "model = torch.nn.parallel.DistributedDataParallel(model)\\n"
...     "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30)\\n"
...     "for epoch in range(90):\\n"
...     "    train(model, optimizer)\\n"
...     "    if args.rank == 0:\\n"
...     "        scheduler.step()\\n"
... )
>>> [(f.code, f.line) for f in lint_source(src) if f.code == "TW154"]
[('TW154', 6)]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule

_RANK = re.compile(r"^(rank|local_rank|global_rank|nr|node_rank|rank_id|process_rank)$", re.I)
_MAIN = re.compile(r"main_proc|is_main|is_master|master_process|is_primary|main_process|is_rank_zero", re.I)
_DISTRIBUTED = re.compile(r"DistributedDataParallel|\bDDP\(|init_process_group", re.I)
_RUN_STATE = frozenset({"optimizer", "scheduler", "scaler"})


@rule("TW154", Level.WARNING, hint="run it on every rank (only logging and saving belong under a rank-0 test)")
def state_changed_on_one_rank(ctx: FileContext) -> Iterator[Hit]:
    """Training state that every rank holds, changed under a rank-0 test.

    Why: each DDP process has its own optimizer, scheduler and ``requires_grad`` flags; a change made
    only where ``rank == 0`` leaves the other ranks on the old learning rate, the fresh optimizer
    state or other trainable layers, and the replicas drift apart or their gradient all-reduce
    disagrees (SimCLR steps its scheduler only on node 0, deepspeech.pytorch anneals only on the
    main process, YOLOP restores the optimizer and freezes layers only on rank 0).
    Fix: keep logging and saving under the rank test and run the state change on every rank.
    It reports an ``if`` whose test requires rank 0 (``rank == 0``, ``rank in [-1, 0]``, ``args.nr ==
    0``, a ``main_proc`` name given such a test, ``is_main_process()``) when its body steps a
    scheduler, calls an optimizer's, scheduler's or scaler's ``load_state_dict``, writes an ``lr``
    into ``param_groups`` or sets ``requires_grad``, in a file that wraps a model in
    DistributedDataParallel (or starts a process group) and broadcasts nothing.
    Cannot see: a rank test made in another file, or state synchronised by a library afterwards.
    """
    if not _DISTRIBUTED.search(ctx.source) or "broadcast" in ctx.source:
        return
    for node in ctx.nodes:
        if not (isinstance(node, ast.If) and _rank_zero_only(ctx, node.test)):
            continue
        changes: dict[str, int] = {}
        for inner in (n for s in node.body for n in ast.walk(s)):
            what = _state_change(ctx, inner)
            if what is not None:
                changes.setdefault(what, inner.lineno)  # type: ignore[attr-defined]
        if changes:  # reported at the rank test: the cause, whatever it guards
            listed = " and ".join(f"{what} (line {line})" for what, line in changes.items())
            test = ast.unparse(node.test)
            drift = "the other ranks keep their own state, and the replicas drift"
            yield Hit(node, f"{listed} run only where {test}: {drift}")


def _state_change(ctx: FileContext, node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        if ctx.is_scheduler_step(node):
            return f"{ast.unparse(node.func)}()"
        if method(node) == "load_state_dict" and ctx.kind(receiver(node)) in _RUN_STATE:
            return f"{ast.unparse(node.func)}(...)"
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
                return "setting requires_grad"
            if isinstance(target, ast.Subscript) and _is_lr_key(target) and _param_group(ctx, target.value):
                return "setting the learning rate"
    return None


def _is_lr_key(target: ast.Subscript) -> bool:
    return isinstance(target.slice, ast.Constant) and target.slice.value == "lr"


def _param_group(ctx: FileContext, value: ast.expr) -> bool:
    """``g`` of ``for g in optimizer.param_groups``, or ``optimizer.param_groups[0]``."""
    if "param_groups" in ast.unparse(value):
        return True
    name = dotted(value)
    loops = (n for n in ctx.nodes if isinstance(n, ast.For) and dotted(n.target) == name)
    return any("param_groups" in ast.unparse(loop.iter) for loop in loops)


def _rank_zero_only(ctx: FileContext, test: ast.expr) -> bool:
    """The test holds on rank 0 alone: a rank compared with 0 (or ``in [-1, 0]``), a main-process
    flag or call, possibly joined to other conditions by ``and``."""
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.And) and any(_rank_zero_only(ctx, v) for v in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        sides = [test.left, test.comparators[0]]
        ranked = any(_RANK.search((dotted(s) or "").rsplit(".", 1)[-1]) for s in sides)
        zero = any(isinstance(s, ast.Constant) and s.value == 0 for s in sides)
        if isinstance(test.ops[0], ast.Eq):
            return ranked and zero
        if isinstance(test.ops[0], ast.In) and isinstance(test.comparators[0], ast.List | ast.Tuple):
            values = [e.value for e in test.comparators[0].elts if isinstance(e, ast.Constant)]
            return ranked and 0 in values and all(v in (0, -1) for v in values)
        return False
    target = test.func if isinstance(test, ast.Call) else test
    name = dotted(target)
    if name is None:
        return False
    if _MAIN.search(name.rsplit(".", 1)[-1]):
        return True
    values = ctx.assignments.get(name, [])
    return any(isinstance(v, ast.Compare) and _rank_zero_only(ctx, v) for v in values)
