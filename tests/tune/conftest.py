"""The fixture every tuner test leans on: a model with every kind of state a tuner could disturb."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def trained_mlp():
    """An MLP with dropout and BatchNorm whose AdamW already holds state and a scheduler, and a
    dataset: every kind of state a tuner could disturb."""
    torch.manual_seed(0)
    x = torch.randn(256, 16)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    data = torch.utils.data.TensorDataset(x, y)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU(),
                                torch.nn.Dropout(0.2), torch.nn.Linear(32, 3))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    for _ in range(3):
        torch.nn.functional.cross_entropy(model(x[:32]), y[:32]).backward()
        optimizer.step()
        scheduler.step()
    # Leave a gradient in place: a tuner must put it back too.
    torch.nn.functional.cross_entropy(model(x[:8]), y[:8]).backward()
    return model, optimizer, scheduler, data


@pytest.fixture
def one_thread():
    """Timings on a shared 2-core machine: two OpenMP threads that wait on each other turn a busy
    neighbour into 10x noise; one thread keeps phases, steps and loaders comparable."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
