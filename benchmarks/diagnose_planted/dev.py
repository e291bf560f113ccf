"""The working half of the planted runs: the rules are changed against these (never `heldout.py`).

The other variant of each pair in `heldout.py` (split there with ``random.Random(2112)``). Same
format: ``name: (expected codes, build)``.
"""

from __future__ import annotations

import torch
from benchmarks.diagnose_planted import shapes as S
from torch import nn
from torch.optim.lr_scheduler import LambdaLR


def imbalanced_noise_binary():
    """A 90/10 fraud-style binary set whose features carry no signal: it predicts the majority."""
    return dict(model=S.mlp(10, 32, 2), train_data=S.noise_labels(512, seed=1, weights=[9, 1]),
                val_data=S.noise_labels(256, seed=2, weights=[9, 1]), config=S.base_config())


def regressor_no_signal_mlp():
    """An MLP regressor whose standardised target does not depend on its features."""
    return dict(model=S.mlp(8, 64, 1), train_data=S.linear_targets(512, seed=1, signal=False),
                val_data=S.linear_targets(256, seed=2, signal=False), config=S.base_config(task={"type": "regression"}))


def raw_prices_mlp():
    """House prices in dollars (2e5 +- 5e4) as the target of an MLP, never standardised."""
    return dict(model=S.mlp(8, 64, 64, 1), train_data=S.linear_targets(512, seed=1, scale=5e4, offset=2e5),
                val_data=S.linear_targets(256, seed=2, scale=5e4, offset=2e5),
                config=S.base_config(task={"type": "regression"}, optim={"lr": 3e-3}))


def user_warmup_past_run():
    """A user's linear warmup over 10,000 steps (LambdaLR) on a 128-step run at lr 3e-4."""
    return dict(model=S.mlp(8, 64, 1), train_data=S.linear_targets(512, seed=1),
                val_data=S.linear_targets(256, seed=2),
                config=S.base_config(task={"type": "regression"}, optim={"lr": 3e-4}),
                scheduler=lambda opt: LambdaLR(opt, lambda step: min(1.0, (step + 1) / 10000)))


def user_sched_lr20_adamw():
    """A user's LambdaLR whose factor sets AdamW's LR to 20 (meant as a 20-step warmup)."""
    return dict(model=S.mlp(10, 32, 4), train_data=S.blobs(512, seed=1), val_data=S.blobs(256, seed=2),
                config=S.base_config(optim={"lr": 1e-3}), scheduler=lambda opt: LambdaLR(opt, lambda step: 20000.0))


class RawUnitsAfter(S.ShiftsAfter):
    """After ``calls`` reads the features arrive in raw units: scaled and offset, as a cache
    rebuilt without the standardisation (a measurement in grams around 500 instead of z-scores)."""

    def __getitem__(self, index: int):
        x, y = super().__getitem__(index)
        return (x + 0.5 * self.factor if self.reads > self.calls else x), y


def inputs_x1000_midrun():
    """Standardised features until the cache is rebuilt in raw units (x1000, offset 500) at epoch 4."""
    return dict(model=S.mlp(10, 64, 4), train_data=RawUnitsAfter(S.blobs(512, seed=1), calls=4 * 512, factor=1000.0),
                val_data=S.blobs(256, seed=2), config=S.base_config(schedule={"name": "cosine"}))


def batchnorm_batch2():
    """A BatchNorm1d MLP classifier trained at batch_size 2."""
    return dict(model=S.mlp(10, 64, 64, 4, norm=nn.BatchNorm1d), train_data=S.blobs(256, seed=1),
                val_data=S.blobs(256, seed=2), config=S.base_config(train={"batch_size": 2, "epochs": 2},
                                                                   log={"every_n_steps": 8, "grad_stats_every": 32}))


def nan_feature():
    """A tabular set where a few rows hold NaN in one column (missing values never imputed)."""
    return dict(model=S.mlp(10, 32, 4), train_data=S.with_bad_values(S.blobs(512, seed=1), rows=[300, 301, 420],
                                                                      value=float("nan")),
                val_data=S.blobs(256, seed=2), config=S.base_config(data={"shuffle": False}))


def truncated_file():
    """Sample 200 cannot be read (a truncated image): the loader raises OSError at step 6."""
    return dict(model=S.mlp(10, 32, 4), train_data=S.BreaksAt(S.blobs(512, seed=1), bad=200),
                val_data=S.blobs(256, seed=2), config=S.base_config(data={"shuffle": False}))


def frozen_cnn():
    """A CNN whose every parameter is frozen but the first convolution's bias."""
    model = S.freeze_all_but(S.small_cnn(), "0.bias")
    return dict(model=model, train_data=S.squares(512, seed=1), val_data=S.squares(256, seed=2), config=S.base_config())


def bottleneck_10_classes():
    """10 classes in 20-d through a 2-unit hidden layer: too small for its data."""
    return dict(model=S.mlp(20, 2, 10), train_data=S.blobs(1024, seed=1, classes=10, dim=20),
                val_data=S.blobs(256, seed=2, classes=10, dim=20), config=S.base_config(optim={"lr": 3e-3}))


def overfit_regression_40():
    """40 noisy regression samples, a 256x256 MLP, no weight decay, 100 epochs."""
    return dict(model=S.mlp(8, 256, 256, 1), train_data=S.linear_targets(40, seed=1, noise=1.0),
                val_data=S.linear_targets(256, seed=2, noise=1.0),
                config=S.base_config(task={"type": "regression"}, optim={"weight_decay": 0.0},
                                     schedule={"name": "constant"}, train={"epochs": 100, "batch_size": 8},
                                     log={"every_n_steps": 10, "grad_stats_every": 50}))


def healthy_imbalanced_learns():
    """A 90/10 set whose features do carry the class: the model beats the prior."""
    return dict(model=S.mlp(10, 32, 2), train_data=S.blobs(512, seed=1, classes=2, spread=0.8, weights=[9, 1]),
                val_data=S.blobs(256, seed=2, classes=2, spread=0.8, weights=[9, 1]), config=S.base_config())


def healthy_regression():
    return dict(model=S.mlp(8, 64, 1), train_data=S.linear_targets(512, seed=1),
                val_data=S.linear_targets(256, seed=2), config=S.base_config(task={"type": "regression"}))


def healthy_gru_values():
    return dict(model=S.ValueGRU(), train_data=S.value_sequences(512, seed=1), val_data=S.value_sequences(256, seed=2),
                config=S.base_config(task={"type": "regression"}, optim={"lr": 3e-3}))


def healthy_frozen_backbone():
    """Fine-tuning: a frozen 256x256 backbone (98% of the parameters), a trained head."""
    model = S.freeze_all_but(S.mlp(10, 256, 256, 4), "4.weight", "4.bias")
    torch.manual_seed(1)
    return dict(model=model, train_data=S.blobs(512, seed=1), val_data=S.blobs(256, seed=2),
                config=S.base_config(optim={"lr": 3e-3}))


CASES = {
    "imbalanced_noise_binary": ("chance_level", imbalanced_noise_binary),
    "regressor_no_signal_mlp": ("predicts_mean", regressor_no_signal_mlp),
    "raw_prices_mlp": ("unscaled_target", raw_prices_mlp),
    "user_warmup_past_run": ("warmup_too_long", user_warmup_past_run),
    "user_sched_lr20_adamw": ("lr_too_high|diverging|nonfinite", user_sched_lr20_adamw),
    "inputs_x1000_midrun": ("data_shift", inputs_x1000_midrun),
    "batchnorm_batch2": ("batchnorm_small_batch", batchnorm_batch2),
    "nan_feature": ("nonfinite_input", nan_feature),
    "truncated_file": ("failed", truncated_file),
    "frozen_cnn": ("mostly_frozen", frozen_cnn),
    "bottleneck_10_classes": ("underfitting", bottleneck_10_classes),
    "overfit_regression_40": ("overfitting", overfit_regression_40),
    "healthy_imbalanced_learns": ("healthy", healthy_imbalanced_learns),
    "healthy_regression": ("healthy", healthy_regression),
    "healthy_gru_values": ("healthy", healthy_gru_values),
    "healthy_frozen_backbone": ("healthy", healthy_frozen_backbone),
}
