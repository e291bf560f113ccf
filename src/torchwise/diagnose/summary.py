"""`torchwise.summary(model, batch)`: the model layer by layer, from one real batch.

Forward hooks on every submodule record, per call: name, type, input and output shapes, the
parameters the module owns itself (trainable and frozen), and an estimate of its
multiply-accumulates. Totals count each parameter once (shared weights too), so the total equals
``sum(p.numel() for p in model.parameters())``. When the forward fails (a shape error), the
table stops at the failing layer and names it.

>>> import torch
>>> model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
>>> result = summary(model, (torch.zeros(3, 8), torch.zeros(3)))
>>> [(r.name, r.output_shape, r.params, r.macs) for r in result.rows]
[('0', '[3, 4]', 36, 96), ('1', '[3, 4]', 0, 0), ('2', '[3, 2]', 10, 24)]
>>> result.total_params, result.total_macs
(46, 120)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch import nn

from torchwise.data.batch import call_model, split_batch, tensors


@dataclass
class LayerRow:
    name: str
    type: str
    depth: int
    input_shape: str = ""
    output_shape: str = ""
    params: int = 0
    trainable: int = 0
    macs: int = 0
    failed: bool = False


@dataclass
class ModelSummary:
    rows: list[LayerRow]
    total_params: int
    trainable_params: int
    total_macs: int
    failed_layer: str | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def shapes(value: Any) -> str:
    """Shapes of the tensors in a nested value: ``[3, 8]`` or ``([3, 8], [3])``."""
    found = [list(t.shape) for t in tensors(value)]
    if not found:
        return "-"
    text = ", ".join(str(s) for s in found)
    return text if len(found) == 1 else f"({text})"


def estimate_macs(module: nn.Module, output: Any) -> int:
    """Multiply-accumulates of one call, for the layer kinds whose count is exact enough to matter."""
    out = next(iter(tensors(output)), None)
    if out is None:
        return 0
    if isinstance(module, nn.Linear):
        return out.numel() * module.in_features
    if isinstance(module, nn.modules.conv._ConvNd):
        per_output = module.in_channels // module.groups * math.prod(module.kernel_size)
        return out.numel() * per_output
    if isinstance(module, nn.Bilinear):
        return out.numel() * module.in1_features * module.in2_features
    if isinstance(module, (nn.RNNBase,)):
        gates = {"LSTM": 4, "GRU": 3}.get(type(module).__name__, 1)
        steps = out.numel() // (module.hidden_size * (2 if module.bidirectional else 1))
        return steps * gates * module.hidden_size * (module.input_size + module.hidden_size)
    return 0  # activations, norms, pooling: small next to the layers above


def summary(model: nn.Module, batch: Any) -> ModelSummary:
    """Run ``batch`` (as the loader yields it: ``(inputs, target)``, a dict, a tensor) through
    ``model`` under ``torch.no_grad()`` in eval mode and return the per-layer table."""
    inputs, _ = split_batch(batch)
    rows: list[LayerRow] = []
    open_rows: list[LayerRow] = []
    seen: set[int] = set()  # parameters already counted (shared weights count once)
    handles = []

    def pre_hook(name: str, depth: int):
        def hook(module: nn.Module, args: tuple, kwargs: dict) -> None:
            row = LayerRow(name=name, type=type(module).__name__, depth=depth,
                           input_shape=shapes((args, kwargs) if kwargs else args))
            for p in module.parameters(recurse=False):
                if id(p) not in seen:
                    seen.add(id(p))
                    row.params += p.numel()
                    row.trainable += p.numel() if p.requires_grad else 0
            rows.append(row)
            open_rows.append(row)
        return hook

    def post_hook(module: nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
        row = open_rows.pop()
        row.output_shape = shapes(output)
        row.macs = estimate_macs(module, output)

    leaf_model = not any(True for _ in model.children())
    for name, module in model.named_modules():
        if module is model and not leaf_model:  # a model that is one layer gets its own row
            continue
        name = name or type(module).__name__
        depth = name.count(".")
        handles.append(module.register_forward_pre_hook(pre_hook(name, depth), with_kwargs=True))
        handles.append(module.register_forward_hook(post_hook, with_kwargs=True))
    was_training = model.training
    failed_layer = error = None
    try:
        model.eval()
        with torch.no_grad():
            call_model(model, inputs)
    except Exception as err:  # the table up to here is the point: name the layer that failed
        error = f"{type(err).__name__}: {err}"
        if open_rows:
            open_rows[-1].failed = True
            failed_layer = open_rows[-1].name
    finally:
        for handle in handles:
            handle.remove()
        model.train(was_training)
    if failed_layer is not None:
        rows = rows[:rows.index(next(r for r in rows if r.failed)) + 1]
    params = list({id(p): p for p in model.parameters()}.values())
    return ModelSummary(rows=rows, total_params=sum(p.numel() for p in params),
                        trainable_params=sum(p.numel() for p in params if p.requires_grad),
                        total_macs=sum(r.macs for r in rows), failed_layer=failed_layer, error=error)


def render_summary(result: ModelSummary, *, title: str = "model summary") -> None:
    """The table on the terminal (rich), then totals, or the failing layer and the error."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column, justify in (("layer", "left"), ("type", "left"), ("input", "left"), ("output", "left"),
                            ("params", "right"), ("MACs", "right")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in result.rows:
        frozen = row.params - row.trainable
        params = f"{row.params:,}" + (f" ({frozen:,} frozen)" if frozen else "")
        style = "bold red" if row.failed else None
        table.add_row("  " * row.depth + row.name, row.type, row.input_shape, row.output_shape or "failed",
                      params if row.params else "-", f"{row.macs:,}" if row.macs else "-", style=style)
    console = Console()
    console.print(table)
    frozen = result.total_params - result.trainable_params
    console.print(f"parameters: {result.total_params:,} ({result.trainable_params:,} trainable"
                  + (f", {frozen:,} frozen" if frozen else "") + f")   MACs per batch: {result.total_macs:,}",
                  highlight=False)
    if result.failed_layer is not None:
        console.print(f"the forward pass failed in layer {result.failed_layer!r}: {result.error}",
                      markup=False, highlight=False)
