"""Running a model without leaving a trace: its mode, buffers and the RNG put back bit for bit."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch import nn


@contextlib.contextmanager
def unchanged(model: nn.Module, *, training: bool) -> Iterator[None]:
    """Run ``model`` in train (or eval) mode without gradients, then restore every module's mode,
    every buffer (batch-norm statistics) and the CPU and CUDA RNG states (dropout) bit for bit."""
    modes = {module: module.training for module in model.modules()}
    buffers = [(buffer, buffer.detach().clone()) for buffer in model.buffers()]
    model.train(training)
    try:
        # no_grad, not inference_mode: batch norm updates its (normal) buffers in train mode.
        with torch.random.fork_rng(devices=_cuda_devices(model)), torch.no_grad():
            yield
    finally:
        with torch.no_grad():
            for buffer, saved in buffers:
                buffer.copy_(saved)
        for module, mode in modes.items():
            module.training = mode


def _cuda_devices(model: nn.Module) -> list[int]:
    return sorted({t.device.index or 0 for t in (*model.parameters(), *model.buffers()) if t.is_cuda})
