"""Leave the user's objects as they were: every tuner measures on real steps, then puts back the
model, the optimizer, the scheduler, the gradients, the train/eval flags and every RNG, bit for bit.

>>> import torch
>>> model = torch.nn.Linear(3, 1); before = model.weight.clone()
>>> with preserved(model):
...     _ = model.weight.data.add_(1.0)
>>> torch.equal(model.weight, before)
True
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

from torchwise.reproducibility import capture_rng_state, restore_rng_state


def _host_copy(value: Any) -> Any:
    # Snapshots live on the host: on a GPU they must not take the memory the tuner is measuring.
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    if isinstance(value, dict):
        return {k: _host_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_host_copy(v) for v in value)
    return copy.deepcopy(value)


@contextlib.contextmanager
def preserved(model: nn.Module, optimizer: torch.optim.Optimizer | None = None,
              scheduler: Any = None) -> Iterator[None]:
    """Snapshot on entry, restore on exit (also when the body raises, e.g. out of memory)."""
    weights = {k: _host_copy(v) for k, v in model.state_dict(keep_vars=True).items()}
    grads = {name: None if p.grad is None else _host_copy(p.grad) for name, p in model.named_parameters()}
    modes = {name: module.training for name, module in model.named_modules()}
    optimizer_state = _host_copy(optimizer.state_dict()) if optimizer is not None else None
    # param_groups hold python values the tuners change (lr); state_dict() keeps them exactly.
    scheduler_state = copy.deepcopy(scheduler.state_dict()) if scheduler is not None else None
    rng = capture_rng_state()
    try:
        yield
    finally:
        with torch.no_grad():
            current = model.state_dict(keep_vars=True)
            for key, saved in weights.items():
                current[key].copy_(saved)
        for name, param in model.named_parameters():
            saved_grad = grads.get(name)
            param.grad = None if saved_grad is None else saved_grad.to(param.device)
        for name, module in model.named_modules():
            module.training = modes[name]
        if optimizer is not None:
            optimizer.state.clear()
            optimizer.load_state_dict(optimizer_state)
        if scheduler is not None:
            scheduler.load_state_dict(scheduler_state)
        restore_rng_state(rng)
