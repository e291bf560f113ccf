"""TW141: gradients handed to a shared model by reference, cleared on one side only (A3C workers).

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "import torch\\n"
...     "def ensure_shared_grads(model, shared_model):\\n"
...     "    for param, shared_param in zip(model.parameters(), shared_model.parameters()):\\n"
...     "        shared_param._grad = param.grad\\n"
...     "optimizer = torch.optim.Adam(shared_model.parameters())\\n"
...     "optimizer.zero_grad()\\n"
... )
>>> [(f.code, f.line) for f in lint_source(src)]
[('TW141', 6)]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import is_constant, keyword, method, receiver
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule


@rule("TW141", Level.WARNING, hint="also zero the local model's gradients (model.zero_grad()) before each backward")
def shared_gradients_never_cleared(ctx: FileContext) -> Iterator[Hit]:
    """``shared_param._grad = param.grad`` with only the shared optimizer's ``zero_grad()``.

    Why: the shared parameter and the worker's parameter then hold the same gradient tensor.
    Until torch 2.0 ``optimizer.zero_grad()`` zeroed that tensor in place, for both; since 2.0 it
    sets the shared ``.grad`` to ``None`` and the worker's tensor keeps its values, so every
    ``backward()`` adds to all the gradients before it and each update applies their running
    sum (ikostrikov's pytorch-a3c ``ensure_shared_grads``, copied by most A3C code).
    Fix: ``model.zero_grad()`` on the worker's model before its backward (or
    ``optimizer.zero_grad(set_to_none=False)``, the old behaviour).
    It reports each optimizer ``zero_grad()`` in a file that assigns one parameter's ``.grad``
    to another's ``._grad`` / ``.grad`` and never clears gradients any other way (a module's
    ``zero_grad()``, ``set_to_none=False``, ``p.grad = None`` or ``p.grad.zero_()``).
    Cannot see: a worker model cleared in another file.
    """
    aliases = [
        n
        for n in ctx.nodes
        if isinstance(n, ast.Assign)
        and isinstance(n.value, ast.Attribute)
        and n.value.attr == "grad"
        and any(isinstance(t, ast.Attribute) and t.attr in {"_grad", "grad"} for t in n.targets)
    ]
    if not aliases or _clears_otherwise(ctx):
        return
    line = aliases[0].lineno
    for call in ctx.calls:
        if method(call) == "zero_grad" and ctx.kind(receiver(call)) == "optimizer":
            what = "sets the shared gradients to None (torch >= 2.0)"
            yield Hit(call, f"zero_grad() {what}; the worker's tensors handed over at line {line} are never cleared")


def _clears_otherwise(ctx: FileContext) -> bool:
    for call in ctx.calls:
        if method(call) == "zero_grad" and (
            ctx.kind(receiver(call)) != "optimizer" or is_constant(keyword(call, "set_to_none"), False)
        ):
            return True
        if method(call) == "zero_" and "grad" in ast.unparse(receiver(call) or call):
            return True
    return any(
        isinstance(n, ast.Assign)
        and is_constant(n.value, None)
        and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in n.targets)
        for n in ctx.nodes
    )
