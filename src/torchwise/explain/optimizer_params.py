"""Round 10: what the line that built the optimizer says about an empty parameter list.

``ValueError: optimizer got an empty parameter list`` names no cause, and the floors left four such
pastes unknown; each one's traceback shows the user's line that built the optimizer, and its first
argument tells the two cases apart:

- ``optim.SGD(model.parameters(), ...)``: a module's own parameters(), which yields every registered
  nn.Parameter, trainable or frozen. Empty means the module registers none: its weights are plain
  tensors (or sit in plain lists or dicts), or its constructor built no layer for this configuration.
- ``torch.optim.Adam(gates_params, ...)``: a collection the script built; the selection that filled
  it (by name, module type or requires_grad) matched nothing in this model.

What it cannot see: the module's code when the paste does not show it (the family's own readings
of a misspelt ``__init__``, a used-up filter or plain lists come first where it does). Pure text work.

>>> optimizer_argument("    optimizer = optim.SGD(model.parameters(), lr=args.lr)")
('model', True)
>>> optimizer_argument("    optimizer = torch.optim.Adam(gates_params, lr=args.lr)")
('gates_params', False)
"""

from __future__ import annotations

import re

from torchwise.explain.evidence_gate import layer_owner

# An optimizer built on a line: optim.SGD(, torch.optim.AdamW(, Adam( ... then its first argument.
OPTIMIZER_CALL = re.compile(
    r"\b(?:torch\.)?(?:optim\.)?(?:SGD|Adam|AdamW|RMSprop|Adagrad|Adadelta|Adamax|NAdam|RAdam|LBFGS|SparseAdam|"
    r"ASGD|Rprop|\w*Optimizer|Lion|Adafactor)\(\s*(?P<argument>[\w.]+(?:\(\))?)"
)


def optimizer_argument(source: str) -> tuple[str, bool] | None:
    """(name, whether it is a module's .parameters()) of the first argument of the optimizer built on
    ``source``; None where the line builds none or passes something else (a list of groups, a call)."""
    call = OPTIMIZER_CALL.search(source)
    if call is None:
        return None
    argument = call.group("argument")
    if argument.endswith(".parameters()"):
        return argument.removesuffix(".parameters()"), True
    return (argument, False) if re.fullmatch(r"[A-Za-z_]\w*", argument) else None


def empty_parameters_reading(text: str, before: int) -> tuple[str, str] | None:
    """(cause, fix) read from the user's line that built the optimizer, else None."""
    frame = layer_owner(text, before)
    argument = optimizer_argument(frame.source) if frame is not None else None
    if frame is None or argument is None:
        return None
    name, module = argument
    if module:
        return (
            f"{name}.parameters() is empty at {frame.place} ({frame.source.strip()}): it yields every registered"
            " nn.Parameter, frozen or not, so the module registers none. Its weights are plain tensors"
            " (self.w = torch.randn(...), not nn.Parameter) or sit in plain Python lists or dicts, or its"
            " constructor built no layer for this configuration (a backbone or option it does not build); a"
            " meta-learning module that keeps its weights apart hands them out through its own method"
            " (model.params())",
            f"Check with sum(p.numel() for p in {name}.parameters()); wrap weights in nn.Parameter"
            " (self.w = nn.Parameter(torch.randn(...))) and hold layers in attributes or nn.ModuleList/ModuleDict;"
            f" where {name} keeps its weights apart on purpose, pass its own list to the optimizer.",
        )
    return (
        f"{name}, the collection the script gives the optimizer at {frame.place} ({frame.source.strip()}), is"
        " empty: the selection that filled it (by parameter name, module type or requires_grad) matched"
        " nothing in this model, typically a model or backbone other than the one the selection was written for",
        f"Print the names it should match ([n for n, _ in model.named_parameters()]) and make the rule that"
        f" fills {name} match this model's names or module types; check len({name}) before building the optimizer.",
    )
