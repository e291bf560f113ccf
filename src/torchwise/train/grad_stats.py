"""Per-layer gradient statistics, every ``log.grad_stats_every`` steps, for `diagnose`.

Per layer (a module that owns parameters, e.g. ``body.0``): the gradient norm, the ratio
``|update| / |weight|`` of the optimizer step, and the share of output units (rows of a weight
with two or more dimensions) whose gradient is all zero (dead units). Written as one
``split: grad_stats`` line of metrics.jsonl.

Cost: the per-parameter gradient norms are the ones the step already reads for clipping; on a
stats step the weights are copied once before the optimizer step (one extra copy of the
parameters in memory, freed right after), and the update and weight norms come from
``torch._foreach_norm`` (one fused kernel per dtype/device group) with a single read from the
device. Steps in between do nothing more.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def layer_names(model: nn.Module, params: list[torch.Tensor]) -> list[str]:
    """The owning module's name for each parameter (``"body.0"`` for ``body.0.weight``)."""
    by_id = {id(p): name.rpartition(".")[0] or name for name, p in model.named_parameters()}
    return [by_id.get(id(p), "?") for p in params]


@torch.no_grad()
def before_step(params: list[torch.Tensor]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Copies of the weights and the dead-unit shares, taken while the gradients still exist."""
    weights = torch._foreach_mul(params, 1.0)
    dead = [(p.grad.flatten(1).abs().amax(dim=1) == 0).float().mean() if p.grad.ndim >= 2
            else p.grad.new_zeros((), dtype=torch.float32) for p in params]
    return weights, dead


@torch.no_grad()
def after_step(*, names: list[str], params: list[torch.Tensor], grad_norms: list[float],
               before: tuple[list[torch.Tensor], list[torch.Tensor]]) -> dict[str, dict[str, float]]:
    """Per-layer ``grad_norm``, ``update_ratio`` and ``dead`` (one device read)."""
    weights, dead = before
    updates = torch._foreach_norm(torch._foreach_sub(params, weights))
    norms = torch._foreach_norm(params)
    host = torch.stack([t.float() for t in (*updates, *norms, *dead)]).tolist()
    n = len(params)
    update_sq: dict[str, float] = {}
    weight_sq: dict[str, float] = {}
    grad_sq: dict[str, float] = {}
    dead_share: dict[str, float] = {}
    for i, name in enumerate(names):
        update_sq[name] = update_sq.get(name, 0.0) + host[i] ** 2
        weight_sq[name] = weight_sq.get(name, 0.0) + host[n + i] ** 2
        grad_sq[name] = grad_sq.get(name, 0.0) + grad_norms[i] ** 2
        if params[i].ndim >= 2:
            dead_share.setdefault(name, host[2 * n + i])
    return {name: {"grad_norm": _short(math.sqrt(grad_sq[name])),
                   "update_ratio": _short(math.sqrt(update_sq[name]) / max(math.sqrt(weight_sq[name]), 1e-30)),
                   "dead": _short(dead_share.get(name, 0.0))} for name in grad_sq}


def _short(value: float) -> float | None:
    # Nested values are not cleaned by the run folder: JSON has no NaN, so write null.
    return float(f"{value:.4g}") if math.isfinite(value) else None
