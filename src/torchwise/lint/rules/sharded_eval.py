"""TW155 (info): an evaluation sharded across ranks whose scores nothing in the file gathers.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "from torch.utils.data.distributed import DistributedSampler\\n"
...     "val_sampler = DistributedSampler(val_set, shuffle=False)\\n"
...     "val_loader = DataLoader(val_set, sampler=val_sampler)\\n"
...     "for x, y in val_loader:\\n"
...     "    metric.update(model(x), y)\\n"
...     "print(metric.get())\\n"
... )
>>> [(f.code, f.line, f.level.value) for f in lint_source(src) if f.code == "TW155"]
[('TW155', 2, 'info')]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.forward_flow import EVAL_DATA_WORDS

# all_reduce, all_gather, reduce_loss_dict, PyTorch-Encoding's torch_dist_sum; not a barrier
# (`synchronize()`), which waits for the ranks and sums nothing.
_GATHERS = re.compile(r"reduce|gather|all_to_all|dist_sum|sync_dist", re.I)


@rule("TW155", Level.INFO, hint="all_reduce the metric's sums (or all_gather the predictions) before reading it")
def sharded_evaluation_never_gathered(ctx: FileContext) -> Iterator[Hit]:
    """An evaluation split across ranks by a distributed sampler whose scores nothing gathers.

    Why: a DistributedSampler gives each rank a shard of the validation set; a metric computed from
    that shard and never all-reduced is the shard's, different on every rank, and a best checkpoint
    chosen from it is chosen on part of the data (awesome-semantic-segmentation-pytorch's train.py
    and eval.py).
    Fix: all-reduce the metric's counts (or all-gather the predictions) before reading the score,
    or evaluate on one rank over the whole set.
    It reports, as info (a metric class of another file may gather by itself), a sampler named for
    evaluation that is a ``DistributedSampler`` or a sampler helper handed a distributed flag, in a
    file where the function that loops over a loader named for evaluation calls nothing that
    reduces or gathers (a barrier sums nothing).
    Cannot see: a metric that synchronises itself (torchmetrics' ``dist_sync_on_step``), or a
    gather made in another file.
    """
    for call in ctx.calls:
        holder = _holder(ctx, call)
        if holder is None or not EVAL_DATA_WORDS.search(holder.rsplit(".", 1)[-1]) or not _distributed(ctx, call):
            continue
        loops = [n for n in ctx.nodes if isinstance(n, ast.For) and _walks_evaluation(n)]
        if not loops:
            continue
        scopes = [ctx.scope_of(loop) for loop in loops]
        if any(_GATHERS.search(dotted(c.func) or "") for scope in scopes for c in ctx.reached_calls(scope, 1)):
            continue  # the evaluation's function sums the ranks' counts (torch_dist_sum, all_reduce)
        what = f"{holder} shards the evaluation across ranks and nothing where it is scored gathers the scores"
        yield Hit(call, f"{what}: each rank reports its own shard's metric")


def _holder(ctx: FileContext, call: ast.Call) -> str | None:
    statement = ctx.parents.get(call)
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        return dotted(statement.targets[0])
    return None


def _distributed(ctx: FileContext, call: ast.Call) -> bool:
    """``DistributedSampler(...)``, or a sampler helper of another file given a distributed flag
    (``make_data_sampler(val_dataset, False, args.distributed)``)."""
    name = (ctx.qualname(call.func) or "").rsplit(".", 1)[-1]
    if name == "DistributedSampler":
        return True
    if "sampler" not in name.lower() or ctx.callee(call) is not None:
        return False
    given = [*call.args, *(k.value for k in call.keywords)]
    named = [k.arg or "" for k in call.keywords]
    return any("distributed" in (dotted(v) or "").lower() for v in given) or any("distributed" in n for n in named)


def _walks_evaluation(loop: ast.For) -> bool:
    names = [dotted(n) or "" for n in ast.walk(loop.iter) if isinstance(n, ast.Name | ast.Attribute)]
    return any(EVAL_DATA_WORDS.search(n.rsplit(".", 1)[-1]) and "loader" in n.lower() for n in names)
