from __future__ import annotations

import pytest
import torch
from tests.helpers import quiet_config, step_losses, tiny_classification
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import torchwise


def small_mlp(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


PLAIN = {"optim": {"name": "sgd", "lr": 0.1, "momentum": 0.0, "weight_decay": 0.0},
         "schedule": {"name": "constant"}, "train": {"clip_grad_norm": None, "batch_size": 10, "epochs": 2},
         "data": {"shuffle": False}}


def test_per_step_losses_match_a_hand_written_loop(tmp_path):
    data = tiny_classification()
    result = torchwise.fit(small_mlp(), data, config=quiet_config(**PLAIN), runs_dir=tmp_path)

    model = small_mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    expected = []
    for _ in range(2):
        for x, y in DataLoader(data, batch_size=10):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            expected.append(loss.item())
    assert step_losses(result.run_dir) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("max_norm", [0.05, 100.0])  # clipping on every step, and never
def test_clipping_matches_clip_grad_norm(tmp_path, max_norm):
    data = tiny_classification()
    cfg = quiet_config(**{**PLAIN, "train": {**PLAIN["train"], "clip_grad_norm": max_norm}})
    model = small_mlp()
    torchwise.fit(model, data, config=cfg, runs_dir=tmp_path)

    reference = small_mlp()
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    for _ in range(2):
        for x, y in DataLoader(data, batch_size=10):
            optimizer.zero_grad()
            nn.functional.cross_entropy(reference(x), y).backward()
            torch.nn.utils.clip_grad_norm_(reference.parameters(), max_norm)
            optimizer.step()
    for key, value in reference.state_dict().items():
        assert torch.equal(model.state_dict()[key], value), key


def test_golden_losses_of_a_tiny_seeded_run(tmp_path):
    cfg = quiet_config(train={"epochs": 3, "batch_size": 16, "seed": 3}, log={"every_n_steps": 7})
    result = torchwise.fit(small_mlp(3), tiny_classification(seed=3), config=cfg, runs_dir=tmp_path)
    losses = step_losses(result.run_dir)
    # Golden values of this seeded run (AdamW, warmup-cosine, clipping: the defaults).
    assert losses == pytest.approx(GOLDEN, abs=1e-4)
    assert result.summary["steps"] == 21 and result.summary["epochs"] == 3


GOLDEN = [1.16723, 1.141127, 1.134898]


def weights_after(tmp_path, name: str, *, batch_size: int, accumulate: int, n: int) -> dict:
    model = small_mlp()
    cfg = quiet_config(train={"batch_size": batch_size, "accumulate": accumulate, "epochs": 2},
                       optim={"name": "sgd", "lr": 0.2, "momentum": 0.9})
    torchwise.fit(model, tiny_classification(n=n), config=cfg, runs_dir=tmp_path, name=name)
    return model.state_dict()


@pytest.mark.parametrize("n", [96, 100])  # 100 = 3 full windows of 32 and a partial one of 4
def test_accumulation_equals_the_big_batch(tmp_path, n):
    accumulated = weights_after(tmp_path, "acc", batch_size=8, accumulate=4, n=n)
    big = weights_after(tmp_path, "big", batch_size=32, accumulate=1, n=n)
    for key in big:
        torch.testing.assert_close(accumulated[key], big[key], rtol=1e-5, atol=1e-6)


def test_unweighted_accumulation_would_differ(tmp_path):
    # The partial last window is what weighting fixes: batch 8 x 4 on 100 samples vs 96 differ.
    a = weights_after(tmp_path, "a", batch_size=8, accumulate=4, n=100)
    b = weights_after(tmp_path, "b", batch_size=8, accumulate=1, n=100)
    assert not torch.allclose(a["0.weight"], b["0.weight"])


def test_same_seed_same_batches_with_zero_and_two_workers(tmp_path):
    def run(workers: int) -> tuple[list[float], dict]:
        model = small_mlp()
        cfg = quiet_config(train={"epochs": 2, "batch_size": 16}, data={"num_workers": workers})
        result = torchwise.fit(model, tiny_classification(), config=cfg, runs_dir=tmp_path)
        return step_losses(result.run_dir), model.state_dict()

    losses0, weights0 = run(0)
    losses2, weights2 = run(2)
    assert losses0 == losses2
    for key in weights0:
        assert torch.equal(weights0[key], weights2[key])


def test_early_stopping_stops_and_says_why(tmp_path):
    cfg = quiet_config(train={"epochs": 50, "monitor": "val_loss"}, optim={"lr": 1e-9},
                       early_stop={"enabled": True, "patience": 2, "min_delta": 1.0})
    result = torchwise.fit(small_mlp(), tiny_classification(), tiny_classification(seed=1),
                           config=cfg, runs_dir=tmp_path)
    assert result.status == "early_stopped"
    assert result.summary["epochs"] == 3  # best at epoch 0, then 2 without improvement
    assert "val_loss did not improve" in result.summary["reason"]


def test_no_weight_decay_on_bias_and_norm_and_lr_multipliers():
    from torchwise.config import OptimConfig
    from torchwise.train.optim import build_optimizer

    model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 2))
    opt = build_optimizer(model, OptimConfig(lr=0.1, weight_decay=0.05, lr_multipliers={"0": 0.1}))
    groups = {(g["weight_decay"], round(g["lr"], 6)): len(g["params"]) for g in opt.param_groups}
    # layer 0: weight (decayed) and bias (not) at LR 0.01; LayerNorm weight+bias and the last bias
    # undecayed at 0.1; the last weight decayed at 0.1.
    assert groups == {(0.05, 0.01): 1, (0.05, 0.1): 1, (0.0, 0.01): 1, (0.0, 0.1): 3}


def test_fit_accepts_a_dataloader(tmp_path):
    loader = DataLoader(tiny_classification(), batch_size=25)
    result = torchwise.fit(small_mlp(), loader, config=quiet_config(train={"epochs": 1}), runs_dir=tmp_path)
    assert result.summary["steps"] == 4


def test_nonfinite_loss_fails_the_run_by_default(tmp_path):
    x = torch.randn(40, 6)
    x[5, 0] = float("nan")
    data = TensorDataset(x, torch.arange(40) % 3)
    with pytest.raises(torchwise.TorchwiseError, match="non-finite"):
        torchwise.fit(small_mlp(), data, config=quiet_config(data={"shuffle": False}), runs_dir=tmp_path)
