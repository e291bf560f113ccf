"""Resumes that lose state: the weights back without the optimizer, scaler or schedule (TW131), a
restored value set to a constant again after the resume (TW140)."""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.context import FileContext, position
from torchwise.lint.evidence import holds, unread, values_of
from torchwise.lint.findings import Hit, Level, Unseen
from torchwise.lint.registry import rule
from torchwise.lint.rules.callers import call_sites
from torchwise.lint.rules.resume_amp import scale_left_by_checkpointer
from torchwise.lint.rules.resume_count import continues_count
from torchwise.lint.rules.resume_own import resumes_own_checkpoint
from torchwise.lint.rules.resume_schedule import restarted_schedules
from torchwise.lint.rules.resume_sites import in_resume, restores_weights, resume_test, trains_after
from torchwise.lint.rules.scaler_default import scalers_off_by_default


def _built(ctx: FileContext, kind: str) -> list[str]:
    """Names built here (from a constructor) as ``kind``."""
    nodes = ((name, ast.parse(name, mode="eval").body) for name in ctx.assignments)
    return [name for name, node in nodes if ctx.constructor(node) and ctx.kind(node) == kind]


@rule("TW131", Level.WARNING, hint="save and restore optimizer.state_dict() (and the scaler's) with the weights")
def partial_resume(ctx: FileContext) -> Iterator[Hit]:
    """A resume that restores the model's weights but not the optimizer or the GradScaler.

    Why: Adam's moments, SGD's momentum and the AMP loss scale are part of the training state;
    a resume without them restarts them from zero, and the continued run is not the run that
    stopped (a loss spike, a scale that climbs back from 65536).
    Fix: put ``optimizer.state_dict()`` (and ``scaler.state_dict()``) in the checkpoint and
    ``load_state_dict`` them where the weights are restored.
    It reports a ``model.load_state_dict`` (or ``load_weights``, or the model's own
    ``net.load(path)``) under a resume branch (``if args.resume:``, ``if args.reload:``, ``def resume():``, or an
    ``if`` on an option whose argparse help speaks of it: ``--netG``, "path to netG (to
    continue training)") in a file that builds an optimizer or a GradScaler it never restores.
    A load in a helper whose state comes in as a parameter counts when a caller here passes a
    value it was given under a resume branch (AdaBound's ``build_model(args, device, ckpt=ckpt)``
    after ``if args.resume: ckpt = load_checkpoint(...)``). The ``else:`` of ``if args.resume_net is
    None:`` is a resume (RFBNet), and so is any weights load whose branch sets, or whose ``if`` tests,
    the number a training loop then counts from (SASRec's ``--state_dict_path`` sets
    ``epoch_start_idx``; DCRNN loads when ``self._epoch_num > 0``, then ``range(self._epoch_num, n)``;
    ENAS's ``load_model()`` sets ``self.start_epoch`` itself),
    or that reads back, before training, the path this file's training saves to (DDPG's ``--load``)
    or, from a path given by an option, two or more keys of the dict it saves (vq-vae-2's ``--ckpt``).
    Cannot see: state restored in another file or by a library (``accelerator.load_state``, a
    helper of another file that the resume branch hands the optimizer to: it stays quiet);
    a model loaded under another word (``if args.model:``, ``--pretrained``), or in the ``else``
    of a resume branch (pytorch_image_classification's ``elif config.train.checkpoint:``), or
    with ``strict=False`` (another stage's or model's weights: RAFT's ``--restore_ckpt``), is
    taken for fine-tuning, where a fresh optimizer is right. A scheduler left behind is reported when a
    resume must lose its place: stepped every batch, or stepped with a counter that is only
    ever set to a constant (``scheduler.step(train_step)``, ``train_step = 0``), or stepped once
    per epoch of a loop that continues from the resumed epoch while it was built afresh (reported
    at its constructor); an epoch scheduler told where to start (``last_epoch=``, ``step(epoch)``,
    a rule given the start epoch, a fast-forward loop) is not reported.
    An optimizer this file takes from a function of another file and steps, never restoring it
    (SimCLR's ``optimizer, scheduler = load_optimizer(args, model)``), is reported as info naming
    that function; so is apex amp's loss scale where a checkpointer object of another file, built
    here with the model and the optimizer, does the resume (maskrcnn-benchmark's
    ``DetectronCheckpointer(...).load(...)``).
    Where code it cannot read could supply what is missing, the finding is info and
    names that code.
    """
    restored = {ctx.kind(receiver(c)) for c in ctx.calls if method(c) == "load_state_dict" or method(c) == "load_state"}
    restored |= _handed_on(ctx)
    helpers = restoring_helpers(ctx)
    restored |= {ctx.kind(a) for c in helpers for a in [*c.args, *(k.value for k in c.keywords)]}
    if any(method(c) == "load_state" for c in ctx.calls):
        return  # accelerator.load_state / a library's whole-state restore
    if "scheduler" not in restored:
        yield from restarted_schedules(ctx)
    yield from scale_left_by_checkpointer(ctx, _apex_scale_lost)
    missing = [k for k in ("optimizer", "scaler") if k not in restored and _built(ctx, k)]
    made_elsewhere = [] if "optimizer" in restored or "optimizer" in missing else _optimizers_made_elsewhere(ctx)
    if made_elsewhere:
        missing.append("optimizer")  # graded to info below: the helper that made it may restore it
    if "scaler" not in missing and _apex_scale_lost(ctx):
        missing.append("scaler")
    loads = [c for c in ctx.calls if restores_weights(ctx, c) and not _partial_weights(c)]
    anchors = [
        c
        for c in loads
        if in_resume(ctx, c) or _state_from_resume(ctx, c) or continues_count(ctx, c) or resumes_own_checkpoint(ctx, c)
    ]
    anchors += [c for c in helpers if in_resume(ctx, c) or any(ctx.kind(a) == "optimizer" for a in c.args)]
    schedule_lost = "scheduler" not in restored and _schedule_restarts(ctx)
    if not (missing or schedule_lost or anchors):
        return
    if not missing and schedule_lost:  # weights and optimizer may both come back: any restore will do
        anchors += [c for c in ctx.calls if in_resume(ctx, c) and method(c) == "load_state_dict"]
    # One report per function that resumes (knowledge-distillation's train_and_evaluate and
    # train_and_evaluate_kd each restore the weights and restart their epochs).
    first: dict[int, ast.Call] = {}
    for call in sorted(anchors, key=position):
        scope = ctx.scope_of(call)
        if first and id(scope) not in first and not trains_after(ctx, scope, call):
            continue  # drn's test_model() reads --resume's weights to evaluate them
        first.setdefault(id(scope), call)
    for call in first.values():
        restarted = "scheduler" not in restored and epochs_restart(ctx, call)
        lost = [*missing, *(["scheduler"] if schedule_lost or restarted else [])]
        if lost:
            what = " or the ".join(lost)
            note = _EPOCH_NOTE if restarted and not schedule_lost else _SCHEDULE_NOTE
            message = f"resume restores the weights but not the {what}" + note * ("scheduler" in lost)
            off = scalers_off_by_default(ctx) if lost == ["scaler"] else None
            if off is not None:  # llama2.c: enabled=(dtype == "float16") with dtype = "bfloat16"
                message += f" (the GradScaler is off with this file's defaults: enabled={off})"
                yield Hit(call, message, level=Level.INFO)
            else:
                unseen = _restored_where_unread(ctx, lost) + tuple(
                    Unseen(f"{who}(...) of another file, which makes the optimizer,", "restores its state")
                    for who in made_elsewhere
                )
                yield Hit(call, message, unseen=unseen)


def _optimizers_made_elsewhere(ctx: FileContext) -> list[str]:
    """Functions of another file whose result this file takes as its optimizer (SimCLR's
    ``optimizer, scheduler = load_optimizer(args, model)``) and steps, with no ``load_state_dict``
    of it here: only that function could restore its state."""
    found = []
    for node in ctx.nodes:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1):
            continue
        call, target = node.value, node.targets[0]
        parts = target.elts if isinstance(target, ast.Tuple) else [target]
        if ctx.callee(call) is not None or (ctx.qualname(call.func) or "").startswith("torch."):
            continue
        names = {dotted(p) for p in parts if ctx.kind(p) == "optimizer"} - {None}
        if names and any(ctx.is_optimizer_step(c) and dotted(receiver(c)) in names for c in ctx.calls):
            found.append(dotted(call.func) or "a function")
    return found


def _partial_weights(call: ast.Call) -> bool:
    """``load_state_dict(..., strict=False)``: weights that need not fit this model, another
    stage's or another model's, to start from (RAFT's ``--restore_ckpt`` between the stages of its
    curriculum, each with a fresh optimizer and schedule): a warm start, not a resume."""
    strict = next((k.value for k in call.keywords if k.arg == "strict"), None)
    return isinstance(strict, ast.Constant) and strict.value is False


def _state_from_resume(ctx: FileContext, call: ast.Call) -> bool:
    """``net.load_state_dict(ckpt["net"])`` in ``build_model(args, device, ckpt=None)``, where a
    caller of this file passes a ``ckpt`` it was given under a resume branch (AdaBound's
    ``if args.resume: ckpt = load_checkpoint(ckpt_name)``)."""
    function = ctx.function(call)
    root = next((dotted(n) for a in call.args for n in ast.walk(a) if isinstance(n, ast.Name)), None)
    if function is None or root is None:
        return False
    params = [a.arg for a in [*function.args.args, *function.args.kwonlyargs]]
    if root not in params:
        return False
    positional = [a.arg for a in function.args.args]
    for site in call_sites(ctx, function):
        given = next((k.value for k in site.keywords if k.arg == root), None)
        index = positional.index(root) if root in positional else -1
        offset = 1 if positional[:1] in (["self"], ["cls"]) and isinstance(site.func, ast.Attribute) else 0
        if given is None and 0 <= index - offset < len(site.args):
            given = site.args[index - offset]
        name = dotted(given) if given is not None else None
        scope = ctx.scope_of(site)
        assigned = [
            n
            for n in ctx.walk(scope)
            if isinstance(n, ast.Assign) and any(dotted(t) == name for t in n.targets) and isinstance(n.value, ast.Call)
        ]
        if name and any(in_resume(ctx, n) for n in assigned):
            return True
    return False


def _handed_on(ctx: FileContext) -> set[str | None]:
    """Kinds of the values a resume branch hands to a function of another file
    (``load_model(model, path, optimizer)``, ``restore_optimizer(optimizer, ckpt)``): that
    function may restore them, and lint cannot read it."""
    kinds: set[str | None] = set()
    for call in ctx.calls:
        if ctx.callee(call) is not None or not in_resume(ctx, call):
            continue
        name = ctx.qualname(call.func) or ""
        if name.startswith("torch.") or name in _BUILTINS or method(call) in _LOGGING:
            continue  # torch.save(model, ...), print(optimizer), logger.info(...) restore nothing
        for value in [*call.args, *(k.value for k in call.keywords)]:
            if dotted(value) is not None:
                kinds.add(ctx.kind(value))
    return kinds


def _restored_where_unread(ctx: FileContext, lost: list[str]) -> tuple[Unseen, ...]:
    """Calls under a resume branch of a method of an object lint cannot read that was built with
    everything the resume seems to lose (``trainer.load(path)`` with ``trainer = Trainer(model,
    optimizer)``): it may restore them."""
    found = []
    for call in ctx.calls:
        who = unread(ctx, call)
        if who is not None and in_resume(ctx, call) and all(holds(ctx, receiver(call), kind) for kind in lost):
            found.append(Unseen(f"{who}(...), of an object built with the {' and the '.join(lost)},", "restores them"))
        elif who is not None and lost == ["optimizer"] and _builds_from_checkpoint(ctx, call):
            found.append(Unseen(f"{who}(...), which builds the optimizer from the checkpoint,", "restores its state"))
    return tuple(found)


_CHECKPOINT_WORDS = re.compile(r"ckpt|checkpoint|resume|state", re.I)


def _builds_from_checkpoint(ctx: FileContext, call: ast.Call) -> bool:
    """``optimizer = build_optimizer(cfg, model, checkpoint)``: a factory handed the checkpoint
    (or the resume path) that makes the optimizer may load its state into it."""
    statement = ctx.statement(call)
    if not (isinstance(statement, ast.Assign) and statement.value is call):
        return False
    if not any(ctx.kind(t) == "optimizer" for t in statement.targets):
        return False
    return any(_CHECKPOINT_WORDS.search(dotted(v) or "") for v in values_of(call))


_BUILTINS = frozenset(dir(builtins))
_LOGGING = frozenset({"info", "debug", "warning", "write", "log", "print"})
_EPOCH_NOTE = " (the epoch loop after it starts again at 0, and the schedule with it)"
_SCHEDULE_NOTE = " (its schedule, stepped per batch or from a counter that starts at 0, begins again)"


# `utils.load_checkpoint(path, model, optimizer)`, pycls's `cp.load_checkpoint(file, model, ema, optimizer)`.
_RESTORING = re.compile(r"(^|_)(load_checkpoint|restore|resume)", re.I)


def restoring_helpers(ctx: FileContext) -> list[ast.Call]:
    """Calls of a function of another file named for loading a checkpoint that are handed the
    model or its optimizer: they restore what they are handed (vits' and glow-tts' ``utils.load_checkpoint(path,
    net_g, optim_g)``) and nothing else, as far as this file can tell."""
    return [
        call
        for call in ctx.calls
        if ctx.callee(call) is None
        and _RESTORING.search((dotted(call.func) or "").rsplit(".", 1)[-1])
        and any(ctx.kind(a) in {"model", "optimizer"} for a in call.args)
        and not _hands_unknown(ctx, call)
    ]


def _hands_unknown(ctx: FileContext, call: ast.Call) -> bool:
    """A value after the path whose kind lint cannot tell (``load_checkpoint(path, model,
    trainer)``): it may carry the optimizer or the scaler, so what the call restores is unknown."""
    values = [*call.args[1:], *(k.value for k in call.keywords)]
    return any(
        isinstance(v, ast.Name | ast.Attribute)
        and ctx.kind(v) is None
        and not _AVERAGED.search((dotted(v) or "").rsplit(".", 1)[-1])
        for v in values
    )


# An averaged copy of the model (pycls' `ema`, `swa_model`): more weights, not the optimizer's state.
_AVERAGED = re.compile(r"(^|_)(ema|swa)(_|$)", re.I)


def _apex_scale_lost(ctx: FileContext) -> bool:
    """apex's ``amp.initialize(...)`` keeps a dynamic loss scale that only ``amp.state_dict()`` /
    ``amp.load_state_dict()`` carry over; a file that initialises it and never loads it back
    restarts the scale on a resume (glow-tts' fp16 run)."""
    names = [ctx.qualname(c.func) or "" for c in ctx.calls]
    return any(n.startswith("apex") and n.endswith("amp.initialize") for n in names) and not any(
        n.startswith("apex") and n.endswith("amp.load_state_dict") for n in names
    )


def epochs_restart(ctx: FileContext, anchor: ast.Call) -> bool:
    """After the resume, in the same function, an epoch loop ``for epoch in range(n)`` that starts
    at a constant and steps a scheduler: the resumed run begins again at epoch 0 with the
    schedule's first value (knowledge-distillation-pytorch's ``train_and_evaluate``)."""
    scope = ctx.scope_of(anchor)
    for loop in ctx.walk(scope):
        if not (isinstance(loop, ast.For) and position(loop) > position(anchor)):
            continue
        walked = loop.iter
        if not (isinstance(walked, ast.Call) and dotted(walked.func) == "range" and walked.args):
            continue
        if len(walked.args) > 1 and not isinstance(walked.args[0], ast.Constant):
            continue  # range(start_epoch, n): the resume's epoch decides
        if any(isinstance(n, ast.AugAssign) and dotted(n.target) == dotted(loop.target) for n in loop.body):
            continue  # `epoch += start_epoch` as it runs (Towards-Realtime-MOT): the count goes on
        if any(ctx.is_scheduler_step(c) and not c.args for c in ctx.reached_calls(loop, 1)):
            return True
    return False


def _schedule_restarts(ctx: FileContext) -> bool:
    """A scheduler built here (without ``last_epoch``) whose place in the schedule a resume
    loses: stepped every batch, or stepped with a counter only ever set to a constant."""
    for call in ctx.calls:
        scheduler = receiver(call)
        if not ctx.is_scheduler_step(call) or ctx.constructor(scheduler) is None:
            continue
        built = next(v for v in reversed(ctx.assignments[dotted(scheduler) or ""]) if isinstance(v, ast.Call))
        if any(k.arg == "last_epoch" for k in getattr(built, "keywords", [])):
            continue
        if call.args:
            values = ctx.assignments.get(dotted(call.args[0]) or "", [])
            if values and all(isinstance(v, ast.Constant) for v in values):
                return True  # scheduler.step(train_step) with train_step = 0 on every start
            continue
        loops = ctx.loops(call)
        if loops and any(ctx.is_optimizer_step(c) and ctx.loops(c)[0] is loops[0] for c in ctx.calls_in(loops[0])):
            return True
    return False


@rule("TW140", Level.WARNING, hint="set the starting value before the resume block, not after it")
def restored_then_reset(ctx: FileContext) -> Iterator[Hit]:
    """A value the resume restores (``best_prec1 = checkpoint['best_prec1']``) set to a constant
    again after the resume block.

    Why: the resumed run forgets what it restored: a best accuracy reset to 0 makes the first
    epoch after the resume "the best" and overwrites ``model_best`` with a worse model
    (network-slimming's ``best_prec1 = 0.`` after its resume block, PyTorch-Encoding's
    ``self.best_pred = 0.0`` after the trainer's).
    Fix: give the starting value before the resume block, so the resume can overwrite it.
    It reports a constant given to a name (or ``self.`` attribute) that a resume branch sets
    from what it loaded, later in the same function (or at module level) and outside that
    branch, under no ``if`` or loop that does not also hold the resume.
    Cannot see: a value restored in one function and reset in another, or reset through a
    helper.
    """
    for node in ctx.nodes:
        if not (isinstance(node, ast.Assign) and in_resume(ctx, node) and _from_loaded(node.value)):
            continue
        branches = [a for a in ctx.ancestors(node) if isinstance(a, ast.If) and resume_test(ctx, a.test)]
        if not branches:
            continue
        end = (branches[-1].end_lineno or branches[-1].lineno, 0)  # the outermost: its else is part of it
        names = {dotted(t) for t in node.targets} - {None}
        for later in ctx.walk(ctx.scope_of(node)):
            if not (isinstance(later, ast.Assign) and isinstance(later.value, ast.Constant)):
                continue
            if position(later) <= end or not names & {dotted(t) for t in later.targets}:
                continue
            if _unconditional(ctx, later, branches[-1]):
                what = ast.unparse(later.targets[0])
                yield Hit(later, f"{what} is reset here after the resume restored it (line {node.lineno})")


def _from_loaded(value: ast.expr) -> bool:
    """``checkpoint['best_prec1']``, ``ckpt.get('best', 0)``: a value read out of a container."""
    nodes = ast.walk(value)
    return any(isinstance(n, ast.Subscript) or (isinstance(n, ast.Call) and method(n) == "get") for n in nodes)


def _unconditional(ctx: FileContext, node: ast.AST, branch: ast.AST) -> bool:
    """``node`` runs whenever the resume ``branch`` is reached: every ``if`` / loop / ``try`` /
    ``with`` around it is around the branch too (both under ``if __name__ == "__main__":``)."""
    around_branch = set(map(id, ctx.ancestors(branch)))
    blocks = ast.If | ast.For | ast.While | ast.Try | ast.With | ast.AsyncFor | ast.AsyncWith
    return all(id(a) in around_branch for a in ctx.ancestors(node) if isinstance(a, blocks))
