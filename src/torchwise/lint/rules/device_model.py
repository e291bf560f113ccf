"""TW162: a model never moved to the device its batches are moved to.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "import torch\\n"
...     "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\\n"
...     "model = torch.nn.Linear(4, 2)\\n"
...     "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\\n"
...     "for x, y in loader:\\n"
...     "    loss = (model(x.to(device)) - y.to(device)).pow(2).mean()\\n"
... )
>>> [(f.code, f.line, f.level.value) for f in lint_source(src) if f.code == "TW162"]
[('TW162', 3, 'warning')]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.context import FileContext
from torchwise.lint.evidence import unread
from torchwise.lint.findings import Hit, Level, Unseen
from torchwise.lint.registry import rule

_ACCELERATOR = re.compile(r"cuda|mps|gpu", re.I)
_MOVES = frozenset({"to", "cuda", "to_device", "prepare", "setup", "set_default_device"})
_MOVER = re.compile(r"device|cuda|gpu|prepare", re.I)


@rule("TW162", Level.WARNING, hint="model.to(device) after building it, before the optimizer")
def model_not_on_device(ctx: FileContext) -> Iterator[Hit]:
    """A trained model that is never moved to the device its batches are moved to.

    Why: the script picks a GPU when there is one and moves every batch there with
    ``.to(device)``, but the model's parameters stay on the CPU: on any GPU (or MPS) machine the
    first forward fails with "Expected all tensors to be on the same device" (SmartHeartPipeline's
    ``train_autoencoder.py`` builds ``Autoencoder()`` per fold and never moves it).
    Fix: ``model = Model(...).to(device)`` before building its optimizer.
    It reports a model whose parameters an optimizer built here trains, in a file that sets a
    ``device`` that can be CUDA or MPS and moves values with ``.to(device)``, when nothing in the
    file moves a value of that name (``.to(...)``, ``.cuda()``, a wrapper's ``prepare``), its
    constructor is not handed a device, and no class of this file moves itself.
    Cannot see: a model moved through another name (``net = model; net.cuda()``) it then reports
    wrongly; a constructor or helper of another file that moves the model (where the model is made
    or handed there, the finding is info and names that code).
    """
    device_names = _accelerator_devices(ctx)
    if not device_names or not _moves_values_to(ctx, device_names) or _moves_modules_generically(ctx):
        return
    moved = {_last(dotted(receiver(c))) for c in ctx.calls if method(c) in _MOVES}
    # `to_device(device, policy_net, value_net)`: a function named for moving, handed the model.
    handed_to_mover = {
        dotted(a)
        for c in ctx.calls
        if _MOVER.search(_last(dotted(c.func)))
        for a in [*c.args, *(k.value for k in c.keywords)]
    }
    for model in sorted(ctx.trained):
        parts = model.split(".")
        prefixes = {".".join(parts[: i + 1]) for i in range(len(parts))}  # model.fc moves with model
        if {_last(p) for p in prefixes} & moved or prefixes & handed_to_mover:
            continue
        built = [v for v in ctx.assignments.get(model, []) if isinstance(v, ast.Call)]
        if not built or any("device" in ast.unparse(v).lower() or method(v) in _MOVES for v in built):
            continue
        constructor = built[-1]
        unseen = []
        if (who := unread(ctx, constructor)) is not None:
            unseen.append(Unseen(f"{who}(...)", "moves the model to the device"))
        for call in ctx.calls:
            handed = any(dotted(a) == model for a in [*call.args, *(k.value for k in call.keywords)])
            if handed and (who := unread(ctx, call)) is not None:
                unseen.append(Unseen(f"{who}(...)", "moves the model to the device"))
        what = f"{model} is never moved to {device_names[0]}, where its batches go"
        yield Hit(constructor, f"{what}: the first forward on a GPU fails", unseen=tuple(dict.fromkeys(unseen)))


def _last(name: str | None) -> str:
    return (name or "").rsplit(".", 1)[-1]


def _accelerator_devices(ctx: FileContext) -> list[str]:
    """Names ending in ``device`` that are given a value naming CUDA or MPS."""
    return [
        name
        for name, values in ctx.assignments.items()
        if name.rsplit(".", 1)[-1].endswith("device") and any(_ACCELERATOR.search(ast.unparse(v)) for v in values)
    ]


def _moves_values_to(ctx: FileContext, devices: list[str]) -> bool:
    """``x.to(device)``: the script does move its data to the device it picked."""
    return any(method(c) == "to" and c.args and dotted(c.args[0]) in devices for c in ctx.calls)


def _moves_modules_generically(ctx: FileContext) -> bool:
    """``self.to(device)`` in a class of this file: its modules move themselves."""
    return any(method(c) in {"to", "cuda"} and dotted(receiver(c)) == "self" for c in ctx.calls)
