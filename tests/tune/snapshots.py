"""A snapshot of every piece of state a tuner must leave alone, and the bitwise comparison."""

from __future__ import annotations

import random

import numpy as np
import torch


def snapshot(model: torch.nn.Module, optimizer: torch.optim.Optimizer | None = None, scheduler=None) -> dict:
    state = {f"model.{k}": v.detach().clone() for k, v in model.state_dict().items()}
    state |= {f"grad.{n}": p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    state["modes"] = [m.training for m in model.modules()]
    if optimizer is not None:
        opt = optimizer.state_dict()
        for index, values in opt["state"].items():
            state |= {f"opt.{index}.{k}": v.clone() for k, v in values.items()}
        state["groups"] = [{k: v for k, v in g.items() if k != "params"} for g in opt["param_groups"]]
    if scheduler is not None:
        state["scheduler"] = scheduler.state_dict()
    state["rng.torch"] = torch.get_rng_state()
    state["rng.python"] = random.getstate()
    state["rng.numpy"] = np.random.get_state()[1].copy()
    return state


def assert_same(before: dict, after: dict) -> None:
    assert before.keys() == after.keys()
    for key, value in before.items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(value, after[key]), key
        elif isinstance(value, np.ndarray):
            assert np.array_equal(value, after[key]), key
        else:
            assert value == after[key], key


