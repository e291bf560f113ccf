"""What the rules build on: kinds of names, loops, no_grad and modulo conditions."""

from __future__ import annotations

import ast

import pytest

from torchwise.lint.ast_names import dotted
from torchwise.lint.context import FileContext

SOURCE = """
import torch
import torch.nn as nn
from torch import optim
from torch.utils.data import DataLoader


class Net(nn.Module):
    pass


net = Net().to(device)
head = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
sgd = optim.SGD(net.parameters(), lr=0.1)
warm = optim.lr_scheduler.LambdaLR(sgd, lambda step: 1.0)
amp_scaler = torch.amp.GradScaler("cuda")
batches_for_training = DataLoader(data)
model_state = net.state_dict()
model_path = "m.pt"
"""


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("net", "model"),
        ("head", "model"),
        ("criterion", None),
        ("sgd", "optimizer"),
        ("warm", "scheduler"),
        ("amp_scaler", "scaler"),
        ("batches_for_training", "loader"),
        ("model_state", "state"),
        ("model_path", None),
        ("optimizer", "optimizer"),
        ("self.lr_scheduler", "scheduler"),
        ("val_dl", "loader"),
        ("resnet", "model"),
    ],
)
def test_kind_from_constructor_then_name(name, kind):
    ctx = FileContext.parse(SOURCE)
    assert ctx.kind(ast.parse(name, mode="eval").body) == kind


def test_loops_and_conditions():
    ctx = FileContext.parse(
        "import torch\n"
        "def f(loader, opt):\n"
        "    for epoch in range(3):\n"
        "        for i, b in enumerate(loader):\n"
        "            with torch.no_grad():\n"
        "                if (i + 1) % 4 == 0:\n"
        "                    opt.step()\n"
    )
    step = ctx.calls[-1]
    loops = ctx.loops(step)
    assert [dotted(loop.target) for loop in loops] == [None, "epoch"]
    assert ctx.under_no_grad(step)
    assert ctx.under_modulo(step, loops[0])
    assert ctx.is_optimizer_step(step)
    assert ctx.function(step).name == "f"
