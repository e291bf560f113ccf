"""Where a script resumes: the branch or function that reads a checkpoint back to continue
(``if args.resume:``, ``def load_checkpoint():``), the call that restores the model's weights
there, and whether training follows it. Shared by the resume rules (resume.py, resume_count.py,
resume_own.py) and saving.py."""

from __future__ import annotations

import ast
import re

from torchwise.lint.ast_names import dotted, keyword, method, receiver
from torchwise.lint.context import FileContext, position
from torchwise.lint.rules.data import argparse_option
from torchwise.lint.trained import trained_names

_RESUME_WORDS = re.compile(r"resume|restart|continue|checkpoint|reload", re.I)
# `net.load(path)`: a model's own loader (qfgaohao's pytorch-ssd) restores its weights too.
_LOADS = frozenset({"load_state_dict", "load_weights", "load"})


def in_resume(ctx: FileContext, node: ast.AST) -> bool:
    """Inside a resume branch (``if args.resume:``, or an option whose help says so:
    apex's dcgan ``--netG``, "path to netG (to continue training)") or function
    (``def resume():``, ``def load_checkpoint():``)."""
    chain = list(ctx.ancestors(node))
    children = [node, *chain[:-1]]  # the statement on the path just below each ancestor
    resume_ifs = [
        (a, child in a.body)
        for a, child in zip(chain, children, strict=True)
        if isinstance(a, ast.If) and resume_test(ctx, a.test)
    ]
    if any(in_body == _negated(a.test) for a, in_body in resume_ifs):
        return False  # the `else:` of `if resume:` (an `elif config.train.checkpoint:` fine-tune) starts afresh
    if resume_ifs:
        return True
    for ancestor in chain:
        if isinstance(ancestor, ast.FunctionDef | ast.AsyncFunctionDef) and _RESUME_WORDS.search(ancestor.name):
            return not _SAVING.search(ancestor.name)  # waveglow's save_checkpoint() copies weights to save them
    return False


_SAVING = re.compile(r"save|write|dump|export", re.I)


def resume_test(ctx: FileContext, test: ast.expr) -> bool:
    text = ast.unparse(test)
    if not (_RESUME_WORDS.search(text) or _resume_option(ctx, test)):
        return False
    return not _initial_weights(ctx, test, text)


# `if args.init_checkpoint is not None:` ("pretrained checkpoint path"): weights to start a
# fine-tune from, not a resume; `init_from == 'resume'` (nanoGPT) says resume and stays one.
_INITIAL_WORDS = re.compile(r"pretrain|init|finetun|fine_tun|warm_?start", re.I)
_CONTINUE_WORDS = re.compile(r"resum|restart|continu", re.I)


def _initial_weights(ctx: FileContext, test: ast.expr, text: str) -> bool:
    """A test on a checkpoint that its name or its option's help calls pretrained or initial
    weights, with no word of resuming."""
    if _CONTINUE_WORDS.search(text):
        return False
    helps = []
    for node in ast.walk(test):
        declared = argparse_option(ctx, node.attr) if isinstance(node, ast.Attribute) else None
        help_text = keyword(declared, "help") if declared is not None else None
        if isinstance(help_text, ast.Constant):
            helps.append(str(help_text.value))
    if any(_CONTINUE_WORDS.search(h) for h in helps):
        return False
    return bool(_INITIAL_WORDS.search(text)) or any(_INITIAL_WORDS.search(h) for h in helps)


def _negated(test: ast.expr) -> bool:
    """``not args.resume``, ``args.resume_net is None`` / ``== None`` / ``== ''``: the test holds
    when there is nothing to resume from, so its ``else:`` is the resume (RFBNet's train_RFB.py)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is | ast.Eq)):
        return False
    return any(isinstance(side, ast.Constant) and side.value in (None, "") for side in (test.left, *test.comparators))


def _resume_option(ctx: FileContext, test: ast.expr) -> bool:
    """An ``if`` on a command-line option whose ``help=`` speaks of resuming."""
    for node in ast.walk(test):
        declared = argparse_option(ctx, node.attr) if isinstance(node, ast.Attribute) else None
        text = keyword(declared, "help") if declared is not None else None
        if isinstance(text, ast.Constant) and _RESUME_WORDS.search(str(text.value)):
            return True
    return False


def trains_after(ctx: FileContext, scope: ast.AST, call: ast.Call) -> bool:
    """A backward or an optimizer step after ``call`` in ``scope`` or in the functions of this
    file it calls there: what was restored is trained on."""
    later = [c for c in ctx.calls_in(scope) if position(c) > position(call)]
    reached = [*later, *(inner for c in later if (f := ctx.callee(c)) is not None for inner in ctx.reached_calls(f, 1))]
    return any(ctx.is_backward(c) or ctx.is_optimizer_step(c) for c in reached)


def restores_weights(ctx: FileContext, call: ast.Call) -> bool:
    """``model.load_state_dict(...)`` / ``net.load_weights(...)``, or ``model = torch.load(f)``. An
    object whose parameters go to a call bound to an optimizer's name is a model here too (ENAS's
    ``self.shared_optim = shared_optimizer(self.shared.parameters(), ...)``)."""
    if method(call) in _LOADS and ctx.kind(receiver(call)) == "model":
        return True
    if method(call) in _LOADS and ctx.kind(receiver(call)) is None and dotted(receiver(call)) in _trained_by_name(ctx):
        return True
    statement = ctx.statement(call)
    if (ctx.qualname(call.func) or "") != "torch.load" or not isinstance(statement, ast.Assign):
        return False
    return statement.value is call and any(ctx.kind(t) == "model" for t in statement.targets)


def _trained_by_name(ctx: FileContext) -> frozenset[str]:
    """Names whose parameters an optimizer built here trains, an optimizer known by its name too."""
    return ctx.memo(
        "trained_by_name",
        lambda: trained_names(calls=ctx.calls, qualname=ctx.qualname, assignments=ctx.assignments, by_name=True),
    )
