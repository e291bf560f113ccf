"""An A3C worker in the 2018 style run on torch 2: the worker's gradient tensors are handed to the
shared model by reference and only the shared optimizer is zeroed, and the gradient clip sits
before the backward it was meant to follow."""

import torch
import torch.nn as nn


def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        if shared_param.grad is not None:
            return
        shared_param._grad = param.grad


def train(rank, shared_model, optimizer, steps=20):
    torch.manual_seed(rank)
    model = nn.Linear(4, 2)
    for _ in range(1000):
        model.load_state_dict(shared_model.state_dict())
        states = torch.randn(steps, 4)
        loss = model(states).pow(2).mean()
        optimizer.zero_grad()  # expect: TW141
        nn.utils.clip_grad_norm_(model.parameters(), 40.0)  # expect: TW142
        loss.backward()
        ensure_shared_grads(model, shared_model)
        optimizer.step()


if __name__ == "__main__":
    shared = nn.Linear(4, 2)
    shared.share_memory()
    train(0, shared, torch.optim.Adam(shared.parameters(), lr=1e-4))
