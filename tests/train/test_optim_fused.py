"""The built-in optimizers take torch's fused kernels; a checkpoint from before keeps its step."""

from __future__ import annotations

import pytest
import torch

from torchwise.config import OptimConfig
from torchwise.train.optim import build_optimizer, keep_loaded_implementation


@pytest.mark.parametrize("name", ["sgd", "adam", "adamw"])
def test_built_in_optimizers_are_fused_on_cpu(name):
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.LayerNorm(8))
    optimizer = build_optimizer(model, OptimConfig(name=name, lr=0.01))
    assert [group["fused"] for group in optimizer.param_groups] == [True, True]


def test_a_checkpoint_from_before_fused_steps_unfused_under_a_grad_scaler():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    plain = torch.nn.Linear(4, 2)
    plain.load_state_dict(model.state_dict())
    optimizer = build_optimizer(model, OptimConfig(name="adamw", lr=0.01))
    # the unfused step the old run took, over torchwise's groups (no weight decay on the bias)
    reference = torch.optim.AdamW([{"params": [plain.weight], "weight_decay": 0.01},
                                   {"params": [plain.bias], "weight_decay": 0.0}], lr=0.01)
    saved = optimizer.state_dict()
    for group in saved["param_groups"]:
        group["fused"] = None  # what a checkpoint written before the fused build holds
    optimizer.load_state_dict(saved)
    keep_loaded_implementation(optimizer)
    x = torch.randn(3, 4)
    for net, opt in ((model, optimizer), (plain, reference)):
        scaler = torch.amp.GradScaler("cpu", init_scale=1.0)  # enabled: the fp16 path's calls
        scaler.scale(net(x).square().sum()).backward()
        scaler.unscale_(opt)
        scaler.step(opt)  # without the fix: AssertionError "Expected grad_scale and found_inf to be None"
    assert torch.equal(model.weight, plain.weight) and torch.equal(model.bias, plain.bias)
