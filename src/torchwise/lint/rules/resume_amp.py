"""apex's loss scale left behind by a checkpointer object: ``amp.initialize(...)`` keeps a dynamic
loss scale that only ``amp.state_dict()`` / ``amp.load_state_dict()`` carry over, and a checkpointer
built here with the model and the optimizer (maskrcnn-benchmark's ``DetectronCheckpointer(cfg, model,
optimizer, scheduler, ...)``) restores what it was handed. Read by resume.py (TW131)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Unseen

_LOADS = frozenset({"load", "resume_or_load", "load_checkpoint"})


def scale_left_by_checkpointer(ctx: FileContext, scale_lost: Callable[[FileContext], bool]) -> Iterator[Hit]:
    """A ``checkpointer.load(...)`` of an object of another file built here with the model and the
    optimizer and nothing named for amp, in a file whose apex amp scale nothing restores: info, since
    the checkpointer's own code (unread) could save the scale too."""
    if not scale_lost(ctx):
        return
    for call in ctx.calls:
        if method(call) not in _LOADS:
            continue
        built = _built_with(ctx, receiver(call))
        if built is None or ctx.callee(built) is not None:
            continue
        handed = [*built.args, *(k.value for k in built.keywords)]
        kinds = {ctx.kind(a) for a in handed}
        if not {"model", "optimizer"} <= kinds or any("amp" in (dotted(a) or "").lower() for a in handed):
            continue
        who = dotted(built.func) or "the checkpointer"
        yield Hit(
            call,
            f"resume restores what {who}(...) was handed, not apex amp's loss scale (amp.state_dict())",
            unseen=(Unseen(f"{who}(...), of another file,", "saves and restores the scale itself"),),
        )


def _built_with(ctx: FileContext, node: ast.expr | None) -> ast.Call | None:
    """The constructor call last given to ``node``'s name, if any."""
    name = dotted(node) if node is not None else None
    values = [v for v in ctx.assignments.get(name or "", []) if isinstance(v, ast.Call)]
    return values[-1] if values else None
