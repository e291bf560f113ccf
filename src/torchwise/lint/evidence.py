"""Evidence-graded severity: the code a rule that concludes an absence could not read.

A rule that says "X is missing" (no ``torch.no_grad()``, no ``backward()``, no ``eval()``, an
optimizer not restored, an iterator that runs out) is right only if nothing it did not read could
do X. Where code lint cannot read (a class or function of another file, a caller outside the
file) is handed what it would need to do X, the rule names it in its `Hit` as an `Unseen`, and
the engine reports the finding as info, saying what lint could not see (`findings.graded`). A
warning or an error is thus one whose evidence is complete within the file (and the modules
beside it that lint reads), torch and the standard library.

>>> ctx = FileContext.parse(
...     "import torch\\nfrom loss import Compute\\nc = Compute(opt)\\nc(x)\\ntorch.relu(x)\\nx.max(1)\\n")
>>> [unread(ctx, call) for call in ctx.calls]
['Compute', 'c', None, None]
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable

from torchwise.lint.ast_names import dotted, receiver
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Unseen
from torchwise.lint.rules.callers import call_sites, used_here

# Libraries whose behaviour lint knows: none of them switches autograd off, runs a backward or
# an eval(), restores an optimizer or makes a loader endless behind its caller's back.
KNOWN_LIBRARIES = frozenset(
    "torch torchvision torchaudio torchtext numpy math os sys time random json logging re collections "
    "itertools functools pathlib shutil argparse copy pickle tqdm matplotlib PIL sklearn scipy pandas "
    "datetime glob warnings csv yaml h5py cv2 tensorboardX wandb io gc string operator typing "
    # Libraries whose training helpers lint reads by name elsewhere (apex's amp.scale_loss, Accelerate's
    # accelerator.backward): their calls are known, not code that may hide a zero_grad or a no_grad.
    "apex accelerate timm transformers torchmetrics".split()
)
_BUILTINS = frozenset(dir(builtins))


def _known(qualname: str) -> bool:
    head = qualname.split(".")[0]
    return head in KNOWN_LIBRARIES or (head in _BUILTINS and "." not in qualname)


def _local(ctx: FileContext, name: str) -> bool:
    """A class or function this file defines: lint reads its body."""
    return name in ctx.functions or any(isinstance(n, ast.ClassDef) and n.name == name for n in ctx.nodes)


def _made_unread(ctx: FileContext, built: str) -> bool:
    """An object made by a constructor or factory lint cannot read."""
    return not _known(built) and not _local(ctx, built.rsplit(".", 1)[-1])


def unread(ctx: FileContext, call: ast.Call) -> str | None:
    """The name of the code ``call`` runs where lint cannot read it, or None: a function or
    class of this file, torch, the standard library and builtins are read or known, and a
    method of a value lint knows nothing about (a tensor's ``x.max(1)``) is data, not code.

    A callable object counts through the call that built it: ``compute(x)`` with ``compute =
    Compute(...)`` imported runs ``Compute.__call__``, which lint cannot read."""
    name = dotted(call.func)
    if name is None or ctx.callee(call) is not None or _known(ctx.qualname(call.func) or name):
        return None
    head = name.split(".")[0]
    if head in ctx.imports and head not in ctx.assignments:
        return name  # a class or function of another file, or a function of a module lint cannot read
    if "." not in name and _local(ctx, name):
        return None
    owner = receiver(call) if "." in name else call.func
    built = ctx.constructor(owner) if owner is not None else None
    return name if built is not None and _made_unread(ctx, built) else None


def values_of(call: ast.Call) -> list[ast.expr]:
    """What a call is handed: its positional and keyword arguments."""
    return [*call.args, *(k.value for k in call.keywords)]


def holds(ctx: FileContext, node: ast.expr | None, kind: str) -> bool:
    """Whether the object ``node`` names was handed a ``kind`` value (an optimizer, a model)
    when it was built: ``trainer = Trainer(model, optimizer)``."""
    values = ctx.assignments.get(dotted(node) or "", []) if node is not None else []
    built = next((v for v in reversed(values) if isinstance(v, ast.Call)), None)
    return built is not None and any(ctx.kind(v) == kind for v in values_of(built))


def reaches(ctx: FileContext, call: ast.Call, kind: str) -> bool:
    """Whether code ``call`` runs can reach a ``kind`` object: handed one, or a method (or the
    ``__call__``) of an object built with one (``loss_compute(out, y)`` with ``loss_compute =
    LossCompute(..., optimizer)``)."""
    owner = receiver(call) if isinstance(call.func, ast.Attribute) else call.func
    return any(ctx.kind(v) == kind for v in values_of(call)) or holds(ctx, owner, kind)


def unread_reaching(ctx: FileContext, calls: Iterable[ast.Call], kinds: set[str], does: str) -> tuple[Unseen, ...]:
    """Calls of code lint cannot read that can reach one of ``kinds`` (handed one, or a method of
    an object built with one): each could ``does`` with it (``loss_compute(out, y)`` of an object
    built with the optimizer may zero its gradients, run the backward, or step it)."""
    return tuple(
        dict.fromkeys(
            Unseen(f"{who}(...)", does)
            for c in calls
            if (who := unread(ctx, c)) is not None and any(reaches(ctx, c, kind) for kind in kinds)
        )
    )


def handed_to_unread(ctx: FileContext, calls: Iterable[ast.Call], name: str | None, does: str) -> tuple[Unseen, ...]:
    """The calls among ``calls`` of code lint cannot read that are handed ``name`` (the model,
    the optimizer): each could ``does`` with it (``utils.prepare(model)`` could call eval())."""
    if name is None:
        return ()
    found = []
    for call in calls:
        who = unread(ctx, call)
        if who is not None and any(dotted(v) == name for v in values_of(call)):
            found.append(Unseen(f"{who}(...)", does))
    return tuple(dict.fromkeys(found))


def caller_outside(ctx: FileContext, function: ast.AST | None, does: str) -> tuple[Unseen, ...]:
    """A function whose callers are all outside this file runs from code lint cannot read, which
    could ``does`` around the call (turn autograd off, call eval() first): nothing here calls it or
    hands it on, or every call of it here sits in a function that trains nothing and is itself
    called only from outside (``validate()`` called by ``evaluate()``, which ``main.py`` calls)."""
    if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and _called_from_outside(ctx, function, set()):
        return (Unseen("a caller outside this file", does),)
    return ()


def _called_from_outside(ctx: FileContext, function: ast.FunctionDef | ast.AsyncFunctionDef, seen: set[int]) -> bool:
    if not used_here(ctx, function):
        return True
    sites = call_sites(ctx, function)
    if not sites or id(function) in seen:
        return False  # handed on by name (an engine of this file decides), or a cycle
    seen.add(id(function))
    for site in sites:
        caller = ctx.function(site)
        if caller is None or any(ctx.is_backward(c) for c in ctx.reached_calls(caller, 3)):
            return False  # run at module level, or from training code no caller can put under no_grad
        if not _called_from_outside(ctx, caller, seen):
            return False
    return True
