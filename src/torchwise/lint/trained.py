"""Which names an optimizer built in the file trains: a model, whatever it is called.

>>> from torchwise.lint.context import FileContext
>>> ctx = FileContext.parse("import torch\\nlog = LogReg(8, 2)\\nopt = torch.optim.Adam(log.parameters())\\n")
>>> sorted(trained_names(calls=ctx.calls, qualname=ctx.qualname, assignments=ctx.assignments))
['log']
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.kinds import OPTIMIZER_CLASSES, classify


def trained_names(
    *,
    calls: Sequence[ast.Call],
    qualname: Callable[[ast.AST], str | None],
    assignments: Mapping[str, Sequence[ast.expr]],
    by_name: bool = False,
) -> frozenset[str]:
    """Names whose ``.parameters()`` go into an optimizer built here (directly or through a
    name bound to them); takes FileContext's calls, qualname and assignments, so that this module
    needs no import of the context that asks it: ``Adam(generator.parameters())`` gives {"generator"}."""
    names: set[str] = set()
    # With by_name, `self.shared_optim = shared_optimizer(self.shared.parameters(), ...)` with
    # `shared_optimizer = _get_optimizer(name)` (ENAS): a call whose result goes to an optimizer's
    # name builds one. Only the resume rules ask for it (resume_sites.py); FileContext.kind does not.
    built_as_optimizer = {
        id(value)
        for key, values in assignments.items()
        if by_name and classify(built_from=None, name=key.rsplit(".", 1)[-1], module_classes=frozenset()) == "optimizer"
        for value in values
        if isinstance(value, ast.Call)
    }
    for call in calls:
        name = qualname(call.func) or ""
        aliases = [qualname(a) or "" for a in assignments.get(dotted(call.func) or "", [])]
        name = next((a for a in aliases if a.startswith("torch.optim.")), name)  # optim_name = optim.SGD
        last = name.rsplit(".", 1)[-1]
        # torch.optim's classes, and a project's own wrapper of one (glow-tts' commons.Adam).
        if not ((name.startswith("torch.optim.") and last[:1].isupper()) or last in OPTIMIZER_CLASSES):
            if id(call) not in built_as_optimizer:
                continue
        args = [*call.args, *(k.value for k in call.keywords)]
        # Names inside the arguments too: [{"params": base_params}] with base_params = ...
        named = [n for a in args for n in ast.walk(a) if isinstance(n, ast.Name | ast.Attribute)]
        values = args + [v for n in named for v in assignments.get(dotted(n) or "", [])]
        for node in (n for v in values for n in ast.walk(v)):
            if isinstance(node, ast.Call) and method(node) in {"parameters", "named_parameters"}:
                names.add(dotted(receiver(node)) or "")
    return frozenset(names - {""})
