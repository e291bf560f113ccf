"""Checking an artefact against the eager model on real batches, with the numbers.

The differences are measured over every output tensor: ``max_abs_diff`` is the largest
``|artefact - eager|``; ``max_rel_diff`` is that divided by the largest ``|eager|`` of the same
output (a relative error that does not blow up on outputs near zero). An output passes when
``max_abs_diff <= tolerance * max(1, max|eager|)``: absolute for small outputs, relative for
large logits, where fp32 rounding grows with the value.

>>> import torch
>>> artefact, eager = [torch.tensor([100.125, 1.0])], [torch.tensor([100.0, 1.0])]
>>> compare(artefact, eager), within(artefact, eager, tolerance=2e-3), within(artefact, eager, tolerance=1e-5)
((0.125, 0.00125), True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch

from torchwise.data.batch import call_model, count_samples, tensors
from torchwise.errors import ExportError
from torchwise.export.runtime import Artefact


@dataclass
class Verification:
    """What the check ran and found; stored in the manifest."""

    batch_sizes: list[int]
    max_abs_diff: float
    max_rel_diff: float
    tolerance: float
    data: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def compare(artefact_out: Sequence[torch.Tensor], eager_out: Sequence[torch.Tensor]) -> tuple[float, float]:
    """``(max_abs_diff, max_rel_diff)`` over matching output tensors, rounded to 3 significant digits."""
    worst_abs, worst_rel = 0.0, 0.0
    for got, want in zip(artefact_out, eager_out, strict=True):
        diff = (got.double() - want.double()).abs().max().item() if want.numel() else 0.0
        scale = want.double().abs().max().item() if want.numel() else 0.0
        worst_abs = max(worst_abs, diff)
        worst_rel = max(worst_rel, diff / scale if scale else diff)
    return float(f"{worst_abs:.3g}"), float(f"{worst_rel:.3g}")


def within(artefact_out: Sequence[torch.Tensor], eager_out: Sequence[torch.Tensor], tolerance: float) -> bool:
    for got, want in zip(artefact_out, eager_out, strict=True):
        if not want.numel():
            continue
        bound = tolerance * max(1.0, want.double().abs().max().item())
        if (got.double() - want.double()).abs().max().item() > bound:
            return False
    return True


def verify(model: Callable[..., Any], artefact: Artefact, batches: Sequence[Any], *, tolerance: float,
           data: str) -> Verification:
    """Run ``model`` and ``artefact`` on each batch of inputs; an `ExportError` with the numbers when
    they differ by more than ``tolerance`` (or the artefact cannot run a batch at all)."""
    sizes, worst_abs, worst_rel = [], 0.0, 0.0
    for inputs in batches:
        size = count_samples(inputs)
        sizes.append(size)
        dynamic = artefact.signature.dynamic_batch
        eager = _run_or_explain("eager model", call_model, model, inputs, size=size, dynamic=dynamic)
        got = _run_or_explain(f"{artefact.format} artefact", _run_artefact, artefact, inputs, size=size,
                              dynamic=dynamic)
        shapes = [list(t.shape) for t in got], [list(t.shape) for t in eager]
        if shapes[0] != shapes[1]:
            raise ExportError(f"the {artefact.format} artefact returns shapes {shapes[0]} on a batch of {size}; "
                              f"the eager model returns {shapes[1]}",
                              hint="a traced or exported model may have fixed a size; try --static or "
                                   "--format exported")
        diff_abs, diff_rel = compare(got, eager)
        worst_abs, worst_rel = max(worst_abs, diff_abs), max(worst_rel, diff_rel)
        if not within(got, eager, tolerance):
            raise ExportError(f"the {artefact.format} artefact differs from the eager model on a batch of {size} "
                              f"of {data}: max abs diff {diff_abs:.3g}, max rel diff {diff_rel:.3g} "
                              f"(tolerance {tolerance:g})",
                              hint="a traced branch or a random layer left on gives differences like these; "
                                   "rounding in another runtime is usually below 1e-5 (raise --tolerance "
                                   "if that is what this is)")
    return Verification(batch_sizes=sizes, max_abs_diff=worst_abs, max_rel_diff=worst_rel,
                        tolerance=tolerance, data=data)


def _run_artefact(artefact: Artefact, inputs: Any) -> list[torch.Tensor]:
    return artefact.run(artefact.signature.flatten(inputs))


def _run_or_explain(what: str, run: Callable[[Any, Any], Any], runner: Any, inputs: Any, *, size: int,
                    dynamic: bool) -> list[torch.Tensor]:
    """The output tensors of ``run(runner, inputs)``; an error in it (a model or runtime that cannot
    take a batch of this size) becomes an `ExportError` that suggests --static for a dynamic batch."""
    try:
        with torch.inference_mode():
            return [t.detach().cpu() for t in tensors(run(runner, inputs))]
    except Exception as err:  # the model's or the runtime's own error, whatever its type
        raise ExportError(f"the {what} fails on a batch of {size}: "
                          f"{type(err).__name__}: {str(err).strip().splitlines()[0][:300]}",
                          hint="export with --static: the artefact then takes batches of exactly the "
                               "export's size" if dynamic else "rerun with --debug for the full error") from err
