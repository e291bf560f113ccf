"""Resume bookkeeping: what a resume must carry besides the weights and the optimizer. TW150: a best
score kept from scratch after the run resumed (TW151, an epoch saved after it was trained and then
counted from again, is in ``resume_epoch.py``).

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "import torch\\n"
...     "ckpt = torch.load('last.pt')\\n"
...     "model.load_state_dict(ckpt['model'])\\n"
...     "optimizer.load_state_dict(ckpt['optimizer'])\\n"
...     "best_acc = 0\\n"
...     "for epoch in range(ckpt['epoch'] + 1, 90):\\n"
...     "    train(model, optimizer)\\n"
...     "    acc = validate(model)\\n"
...     "    if acc > best_acc:\\n"
...     "        best_acc = acc\\n"
...     "        torch.save(model.state_dict(), 'best.pt')\\n"
... )
>>> [(f.code, f.line, f.level.value) for f in lint_source(src) if f.code == "TW150"]
[('TW150', 5, 'warning')]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.context import FileContext, position
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.callers import call_sites
from torchwise.lint.rules.resume_count import resumed_counters
from torchwise.lint.rules.resume_own import resumes_own_checkpoint
from torchwise.lint.rules.resume_sites import in_resume, restores_weights

_ORDER = (ast.Gt, ast.Lt, ast.GtE, ast.LtE)
_RUN_STATE = frozenset({"optimizer", "scheduler", "scaler"})
# The entry of a checkpoint that says where the run stood.
POSITION_KEY = re.compile(r"epoch|step|iter", re.I)


def _text(node: ast.AST) -> str:
    return ast.unparse(node)


def _start_value(node: ast.expr) -> bool:
    """What a best score starts from: ``0``, ``None``, ``-1``, ``1e9``, ``float('inf')``, ``np.inf``."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, int | float)
    if isinstance(node, ast.Call) and dotted(node.func) == "float" and len(node.args) == 1:
        return isinstance(node.args[0], ast.Constant)
    return (dotted(node) or "").rsplit(".", 1)[-1] == "inf"


def _resume_points(ctx: FileContext) -> list[ast.AST]:
    """Nodes that make a run continue: the restore of an optimizer's, scheduler's or scaler's
    state (a fine-tune starts those afresh), a weights load under a resume branch or of this
    file's own checkpoint, and a counter set from the checkpoint that a loop then counts from
    (Pointnet's ``start_epoch = checkpoint['epoch']`` ... ``range(start_epoch, args.epoch)``)."""

    def collect() -> list[ast.AST]:
        points: list[ast.AST] = []
        for call in ctx.calls:
            if method(call) == "load_state_dict" and _run_state_with_weights(ctx, call):
                points.append(call)
            elif restores_weights(ctx, call) and (in_resume(ctx, call) or resumes_own_checkpoint(ctx, call)):
                points.append(call)
        counted = {start for loop in ctx.nodes if (start := range_start(loop)) is not None}
        for node in ctx.nodes:
            if not isinstance(node, ast.Assign) or isinstance(node.value, ast.Constant):
                continue
            names = {d for t in node.targets for part in ast.walk(t) if (d := dotted(part))}
            from_checkpoint = _read_from_checkpoint(node.value) or names & resumed_counters(ctx)
            if names & counted and from_checkpoint:
                points.append(node)
        return sorted(points, key=position)

    return ctx.memo("resume_points", collect)


def _run_state_with_weights(ctx: FileContext, call: ast.Call) -> bool:
    """``optimizer.load_state_dict(state['optimizer'])`` where ``state`` also gives the model its
    weights in the same scope (world-models' reload): the run's own checkpoint. An optimizer's
    state read from a pretrained base alone (nanochat's SFT) starts a fine-tune."""
    if ctx.kind(receiver(call)) not in _RUN_STATE or not call.args:
        return False
    roots = {dotted(n) for n in ast.walk(call.args[0]) if isinstance(n, ast.Name)} - {None}
    weights = [c for c in ctx.calls_in(ctx.scope_of(call)) if restores_weights(ctx, c)]
    return any(dotted(n) in roots for c in weights for a in c.args for n in ast.walk(a) if isinstance(n, ast.Name))


def _read_from_checkpoint(value: ast.expr) -> bool:
    """``checkpoint['epoch']``, ``ckpt.get('step', 0)``: an entry read out of a loaded container."""
    for node in ast.walk(value):
        key = node.slice if isinstance(node, ast.Subscript) else None
        if isinstance(node, ast.Call) and method(node) == "get" and node.args:
            key = node.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and POSITION_KEY.search(key.value):
            return True
    return False


def range_start(loop: ast.AST) -> str | None:
    """``start`` of ``for e in range(start, ...)`` (a name or attribute), else None."""
    if not isinstance(loop, ast.For):
        return None
    walked = loop.iter
    if isinstance(walked, ast.Call) and dotted(walked.func) == "range" and len(walked.args) >= 2:
        return dotted(walked.args[0])
    return None


# --- TW150 -----------------------------------------------------------------------------------


def _improvements(ctx: FileContext) -> Iterator[tuple[ast.AST, str, ast.Assign]]:
    """(the comparison's statement, the best's text, the rebind) of each best-so-far: ``if score >
    best:`` whose arm sets ``best`` from ``score``, ``if is_best:`` doing so with ``is_best = score >
    best``, or ``best = max(score, best)`` beside the comparison (pytorch/examples' ImageNet)."""
    for node in ctx.nodes:
        if isinstance(node, ast.If):
            arms = [node]
            tests: list[ast.expr] = [node.test]
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            flag = node.targets[0].id
            arms = [n for n in ctx.walk(ctx.scope_of(node)) if isinstance(n, ast.If) and dotted(n.test) == flag]
            tests = [node.value]
        else:
            continue
        scope = ctx.scope_of(node)
        for part in (n for t in tests for n in ast.walk(t)):
            if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], _ORDER)):
                continue
            for bound, score in ((part.comparators[0], part.left), (part.left, part.comparators[0])):
                rebind = _rebind(ctx, scope, arms, _text(bound), _text(score))
                if rebind is not None:
                    yield node, _text(bound), rebind


def _rebind(ctx: FileContext, scope: ast.AST, arms: list[ast.If], bound: str, score: str) -> ast.Assign | None:
    """``bound = <score>`` in the body of one of ``arms``, or ``bound = max(..score..)`` in ``scope``."""
    inside = [n for arm in arms for s in arm.body for n in ast.walk(s)]
    for node in [*inside, *ctx.walk(scope)]:
        if not (isinstance(node, ast.Assign) and any(_text(t) == bound for t in node.targets)):
            continue
        reads = any(_text(n) == score for n in ast.walk(node.value))
        kept = isinstance(node.value, ast.Call) and dotted(node.value.func) in {"max", "min"}
        if reads and (kept or any(node is n for n in inside)):
            return node
    return None


def _stores(ctx: FileContext, best: str) -> list[tuple[ast.AST, ast.expr]]:
    """Every (statement, value) giving ``best`` a value: ``best = v``, and for ``stats['best']``
    also the dict literal ``stats = {..., 'best': v}``."""
    found: list[tuple[ast.AST, ast.expr]] = []
    container, key = _split_subscript(best)
    for node in ctx.nodes:
        if isinstance(node, ast.AugAssign) and _text(node.target) == best:
            found.append((node, node.value))
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if _text(target) == best:
                found.append((node, node.value))
            elif isinstance(target, ast.Tuple | ast.List) and any(_text(t) == best for t in target.elts):
                found.append((node, node.value))  # best, epoch = load(...): restored
            elif container and _text(target) == container and isinstance(node.value, ast.Dict):
                for k, v in zip(node.value.keys, node.value.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value == key:
                        found.append((node, v))
    return found


def _split_subscript(text: str) -> tuple[str | None, object]:
    node = ast.parse(text, mode="eval").body
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return _text(node.value), node.slice.value
    return None, None


def _gates_a_save(ctx: FileContext, test: ast.AST) -> bool:
    """A save runs under the improvement (``torch.save``, ``save_checkpoint(..., is_best)``,
    ``model.save(path)``), or its flag is handed to one."""
    body = test.body if isinstance(test, ast.If) else []
    calls = [c for n in body for c in ast.walk(n) if isinstance(c, ast.Call)]
    flag = dotted(test.test) if isinstance(test, ast.If) else dotted(getattr(test, "targets", [None])[0] or test)
    if flag:
        scope = ctx.scope_of(test)
        tested = [n for n in ctx.walk(scope) if isinstance(n, ast.If) and dotted(n.test) == flag]
        calls += [c for n in tested for s in n.body for c in ast.walk(s) if isinstance(c, ast.Call)]
        calls += [c for c in ctx.calls_in(scope) if any(dotted(a) == flag for a in c.args)]
    return any("save" in (dotted(c.func) or "").rsplit(".", 1)[-1].lower() for c in calls)


def _point_before(ctx: FileContext, points: list[ast.AST], scope: ast.AST, at: ast.AST) -> ast.AST | None:
    """A resume point in ``scope`` before ``at`` (or in a function of this file that ``scope``
    calls before ``at``)."""
    for point in points:
        if ctx.scope_of(point) is scope and position(point) < position(at):
            return point
        function = ctx.function(point)
        sites = call_sites(ctx, function) if function is not None else []
        if any(ctx.scope_of(s) is scope and position(s) < position(at) for s in sites):
            return point
    return None


@rule("TW150", Level.WARNING, hint="save the best score in the checkpoint and restore it with the weights")
def best_restarts_after_resume(ctx: FileContext) -> Iterator[Hit]:
    """A best score that starts again from its initial value when the run resumes.

    Why: the resumed run compares its first evaluation with ``0`` (or ``None``, or infinity)
    instead of the best it had reached, so that evaluation counts as the best whatever its score,
    and the best checkpoint is overwritten with a worse model (world-models' ``cur_best = None``
    after its reload, Pointnet's ``best_iou = 0`` after it resumes from ``best_model.pth``, DrQA's
    ``stats['best_valid']``).
    Fix: put the best score in the checkpoint and set it from there where the resume restores the
    rest (``best_acc = checkpoint['best_acc']``).
    It reports the initial value of a best-so-far (``if score > best: best = score``, or a flag
    ``is_best = score > best``) given in the same function as a resume (an optimizer's, scheduler's
    or scaler's state restored, a weights load under a resume branch or of this file's own
    checkpoint, a loop counting from an epoch read out of the checkpoint) when no other value is
    ever given to it; a warning when the comparison decides a save, info when it only reports.
    Cannot see: a best score restored by a helper of another file it is not handed to, or kept in
    an object (an early-stopping class) whose state is restored; a best the resume restores and
    then resets is TW140's.
    """
    points = _resume_points(ctx)
    if not points:
        return
    seen: set[str] = set()
    for test, best, rebind in _improvements(ctx):
        if best in seen:
            continue
        stores = _stores(ctx, best)
        starts = [(node, value) for node, value in stores if _start_value(value)]
        others = [node for node, value in stores if not _start_value(value) and node is not rebind]
        if not starts or any(not _from_score(ctx, node, best) for node in others):
            continue  # restored somewhere (TW140 checks that it is not reset after)
        for node, _ in starts:
            scope = ctx.scope_of(node)
            loop_or_test = _running_in(ctx, scope, test)
            if loop_or_test is None or position(loop_or_test) < position(node):
                continue
            point = _point_before(ctx, points, scope, loop_or_test)
            if point is None or _arm_excludes(ctx, node, point):
                continue
            seen.add(best)
            saves = any(_gates_a_save(ctx, t) for t, b, _ in _improvements(ctx) if b == best)
            level = None if saves else Level.INFO
            after = "the first evaluation after it counts as the best" + (
                " and overwrites the best checkpoint" if saves else ""
            )
            what = f"{best} starts again here when the run resumes (line {point.lineno})"
            yield Hit(node, f"{what}: {after}", level=level)
            break


def _from_score(ctx: FileContext, node: ast.AST, best: str) -> bool:
    """Another update from a score, not a restore: ``best = max(best, acc)``, or a value given
    under an ``if`` that compares with the best (a second improvement test)."""
    value = getattr(node, "value", None)
    if isinstance(value, ast.Call) and dotted(value.func) in {"max", "min"}:
        return any(_text(a) == best for a in value.args)
    tests = [a.test for a in ctx.ancestors(node) if isinstance(a, ast.If)]
    return any(_text(n) == best for t in tests for n in ast.walk(t))


def _running_in(ctx: FileContext, scope: ast.AST, test: ast.AST) -> ast.AST | None:
    """The statement of ``scope`` that runs the improvement test: the test itself, or the call of
    the function of this file that holds it (``test(epoch)`` in the epoch loop)."""
    if ctx.scope_of(test) is scope:
        return test
    function = ctx.function(test)
    if function is None:
        return None
    sites = [s for s in call_sites(ctx, function) if ctx.scope_of(s) is scope]
    return sites[0] if sites else None


def _arm_excludes(ctx: FileContext, node: ast.AST, point: ast.AST) -> bool:
    """``node`` sits in the other arm of an ``if`` / ``try`` than the resume (``else: best = 0``
    beside the resume branch): it runs only when nothing was resumed."""
    around_point = {id(a) for a in ctx.ancestors(point)}
    child: ast.AST = node
    for ancestor in ctx.ancestors(node):
        if id(ancestor) in around_point:
            if isinstance(ancestor, ast.If):
                return (child in ancestor.body) != any(point is n for s in ancestor.body for n in ast.walk(s))
            if isinstance(ancestor, ast.Try):
                return child not in ancestor.body and child not in ancestor.finalbody
            return False
        child = ancestor
    return False
