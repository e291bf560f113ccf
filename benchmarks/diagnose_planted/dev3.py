"""Round 3's working half of the planted runs: the rules are changed against these (never `heldout3.py`).

The other variant of each pair in ``heldout3.py`` (drawn there with ``random.Random(2026_12_09)``).
Same format: ``name: (expected codes, build)``, judged before any run was diagnosed; every
expected code existed when this was written.
"""

from __future__ import annotations

import torch
from benchmarks.diagnose_planted import shapes3 as S
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import TensorDataset


def fraud_labels_misjoined():
    """The fraud table whose label column was joined on the row number of another export (rows
    in a different order): about 4% fraud that no feature tells apart."""
    def data(n, seed):
        x, y = S.fraud_table(n, seed).tensors
        return TensorDataset(x, y[torch.randperm(n, generator=S.gen(seed + 50))])
    return dict(model=S.mlp(12, 64, 64, 2), train_data=data(2048, 1), val_data=data(512, 2),
                config=S.base_config(optim={"lr": 1e-3}, train={"epochs": 6, "batch_size": 64}))


def forecast_split_separately():
    """The GRU forecaster whose windows and next values went through two separate shuffled
    train_test_split calls (one for X, one for y): each window paired with another's next value."""
    train, val = S.forecast_split()
    def mixed(data, seed):
        x, y = data.tensors
        return TensorDataset(x[torch.randperm(len(x), generator=S.gen(seed))],
                             y[torch.randperm(len(y), generator=S.gen(seed + 1))])
    return dict(model=S.GRUForecaster(), train_data=mixed(train, 1), val_data=mixed(val, 3),
                config=S.base_config(task={"type": "regression"}, optim={"lr": 3e-3}))


def price_in_dollars():
    """Sale-price regression straight on the price in dollars (2e4..1e6) with MSE."""
    return dict(model=S.mlp(8, 64, 64, 1), train_data=S.sale_prices(2048, 1, dollars=True),
                val_data=S.sale_prices(512, 2, dollars=True),
                config=S.base_config(task={"type": "regression"}, optim={"lr": 1e-3}, train={"batch_size": 64}))


def tags_bert_warmup():
    """The tag classifier (multi-label, BCE) with a linear warmup of 10000 steps copied from a
    BERT fine-tuning script; the run has 192 steps."""
    def warmup(opt):
        return LambdaLR(opt, lambda step: min(1.0, (step + 1) / 10_000))
    return dict(model=S.mlp(24, 128, 8), train_data=S.tag_table(1024, 1), val_data=S.tag_table(256, 2),
                scheduler=warmup, config=S.base_config(task={"type": "multilabel"}, optim={"lr": 1e-3}))


def siamese_warmup_never_capped():
    """The siamese digits model with a hand-written warmup lambda step/20 that forgot min(1, .):
    the LR multiplier keeps growing, 10x at step 200, 20x by the end."""
    def warmup(opt):
        return LambdaLR(opt, lambda step: (step + 1) / 20)
    return dict(model=S.Siamese(), train_data=S.digit_pairs("train", 2048, 1), val_data=S.digit_pairs("val", 512, 2),
                scheduler=warmup,
                config=S.base_config(optim={"name": "sgd", "lr": 0.05, "momentum": 0.9},
                                     train={"clip_grad_norm": None}))


def siamese_second_shard_raw_pixels():
    """The siamese digits model on shards of pairs: the second shard was written with raw
    0..255 pixels instead of 0..1 (x255 from sample 6000 on)."""
    return dict(model=S.Siamese(),
                train_data=S.ShardStream(S.digit_pairs("train", 2048, 1), switch_after=6000, factor=255.0,
                                         target_too=False),
                val_data=S.digit_pairs("val", 512, 2), config=S.base_config(optim={"lr": 1e-3}))


def conv_forecaster_batchnorm_batch_1():
    """The 1D-CNN forecaster with BatchNorm1d after each convolution, fed one window at a time
    (batch_size=1, as the forecasting tutorials do)."""
    train, val = S.forecast_split()
    return dict(model=S.ConvForecaster(batchnorm=True), train_data=train, val_data=val,
                config=S.base_config(task={"type": "regression"}, optim={"lr": 1e-3},
                                     train={"epochs": 2, "batch_size": 1},
                                     log={"every_n_steps": 40, "grad_stats_every": 80}))


def forecast_sensor_gap():
    """The GRU forecaster on a load series with a six-hour meter outage stored as NaN."""
    s = S.load_series()
    s[1000:1003] = float("nan")
    mean, std = s[:1200].nanmean(), s[:1200][~s[:1200].isnan()].std()
    train, val = S.forecast_split(scaled=False, series=(s - mean) / std)
    return dict(model=S.GRUForecaster(), train_data=train, val_data=val,
                config=S.base_config(task={"type": "regression"}, optim={"lr": 3e-3}))


def recommender_unseen_val_user():
    """The recommender sized by the largest user id of the training ratings (max + 1); the
    validation export (ordered by user id) holds the 20 newest users, who rated only after the
    training export: their ids run past the end of the embedding."""
    train, val, mean = S.ratings()
    keep = train.a < S.USERS - 20
    train = S.Pairs(train.a[keep], train.b[keep], train.y[keep])
    order = torch.argsort(val.a, stable=True)
    val = S.Pairs(val.a[order], val.b[order], val.y[order])
    return dict(model=S.MatrixFactorization(users=int(train.a.max()) + 1, mean=mean), train_data=train,
                val_data=val,
                config=S.base_config(task={"type": "regression"}, optim={"lr": 1e-2}, train={"batch_size": 128}))


def siamese_encoder_load_skipped():
    """The siamese model whose encoder was to come from a checkpoint saved under DataParallel
    ('module.' keys), loaded with strict=False (nothing matched) and then frozen: a random
    encoder, only the head trains."""
    model = S.Siamese()
    saved = {f"module.{k}": v for k, v in S.Siamese().encoder.state_dict().items()}
    model.encoder.load_state_dict(saved, strict=False)
    for p in model.encoder.parameters():
        p.requires_grad_(False)
    return dict(model=model, train_data=S.digit_pairs("train", 2048, 1), val_data=S.digit_pairs("val", 512, 2),
                config=S.base_config(optim={"lr": 1e-3}))


def recommender_dim_1():
    """The recommender with one factor per user and item for tastes of rank 6."""
    train, val, mean = S.ratings()
    return dict(model=S.MatrixFactorization(dim=1, mean=mean), train_data=train, val_data=val,
                config=S.base_config(task={"type": "regression"}, optim={"lr": 1e-2}, train={"batch_size": 128}))


def tags_wide_mlp_160_rows():
    """The tag classifier, 24-512-512-8, trained 40 epochs at a constant LR on 160 rows."""
    return dict(model=S.mlp(24, 512, 512, 8), train_data=S.tag_table(160, 1), val_data=S.tag_table(512, 2),
                config=S.base_config(task={"type": "multilabel"}, optim={"lr": 1e-3, "weight_decay": 0.0},
                                     schedule={"name": "constant"}, train={"epochs": 40, "batch_size": 32}))


def healthy_gru_forecaster():
    train, val = S.forecast_split()
    return dict(model=S.GRUForecaster(), train_data=train, val_data=val,
                config=S.base_config(task={"type": "regression"}, optim={"lr": 3e-3}))


def healthy_digit_properties_cnn():
    return dict(model=S.SmallCNN(outputs=4), train_data=S.digit_properties("train"),
                val_data=S.digit_properties("val"),
                config=S.base_config(task={"type": "multilabel"}, optim={"lr": 2e-3}))


def healthy_pixels_batchnorm():
    return dict(model=S.PixelNet(batchnorm=True), train_data=S.shape_masks(768, 1), val_data=S.shape_masks(256, 2),
                config=S.base_config(optim={"lr": 3e-3}, train={"batch_size": 16}))


def healthy_siamese():
    return dict(model=S.Siamese(), train_data=S.digit_pairs("train", 4096, 1), val_data=S.digit_pairs("val", 512, 2),
                config=S.base_config(optim={"lr": 1e-3}))


CASES = {
    "fraud_labels_misjoined": ("chance_level", fraud_labels_misjoined),
    "forecast_split_separately": ("predicts_mean", forecast_split_separately),
    "price_in_dollars": ("unscaled_target", price_in_dollars),
    "tags_bert_warmup": ("warmup_too_long", tags_bert_warmup),
    "siamese_warmup_never_capped": ("lr_too_high|diverging|nonfinite", siamese_warmup_never_capped),
    "siamese_second_shard_raw_pixels": ("data_shift", siamese_second_shard_raw_pixels),
    "conv_forecaster_batchnorm_batch_1": ("batchnorm_small_batch", conv_forecaster_batchnorm_batch_1),
    "forecast_sensor_gap": ("nonfinite_input", forecast_sensor_gap),
    "recommender_unseen_val_user": ("failed", recommender_unseen_val_user),
    "siamese_encoder_load_skipped": ("mostly_frozen", siamese_encoder_load_skipped),
    "recommender_dim_1": ("underfitting", recommender_dim_1),
    "tags_wide_mlp_160_rows": ("overfitting", tags_wide_mlp_160_rows),
    "healthy_gru_forecaster": ("healthy", healthy_gru_forecaster),
    "healthy_digit_properties_cnn": ("healthy", healthy_digit_properties_cnn),
    "healthy_pixels_batchnorm": ("healthy", healthy_pixels_batchnorm),
    "healthy_siamese": ("healthy", healthy_siamese),
}
