"""Round 2's working half of the planted runs: the rules are changed against these (never `heldout2.py`).

The other variant of each pair in ``heldout2.py`` (drawn there with ``random.Random(2026_12_05)``).
Same format: ``name: (expected codes, build)``; ``val_mismatch`` and ``unscaled_inputs`` are
codes added in round 2 (see ``heldout2.py``).
"""

from __future__ import annotations

import torch
from benchmarks.diagnose_planted import shapes2 as S
from torch import nn


def bow_text_labels_shuffled():
    """A bag-of-words sentiment classifier whose labels were shuffled against the sentences."""
    return dict(model=S.BagOfWords(), train_data=S.sentence_classes(1024, 1, shuffle=True),
                val_data=S.sentence_classes(256, 2, shuffle=True), config=S.base_config(optim={"lr": 3e-3}))


def tabular_sgd_lr_3():
    """A tabular MLP on the z-scored income table with plain SGD at lr=3 (meant 3e-3)."""
    return dict(model=S.deep_mlp(7, 64, 64, 2), train_data=S.income_table(1024, 1, dollars=False),
                val_data=S.income_table(256, 2, dollars=False),
                config=S.base_config(optim={"name": "sgd", "lr": 3.0, "momentum": 0.9}, schedule={"name": "constant"},
                                     train={"clip_grad_norm": None}))


def autoencoder_sgd_lr_1e5():
    """A digits autoencoder with plain SGD at lr=1e-5."""
    return dict(model=S.autoencoder(16), train_data=S.autoencoder_data("train"), val_data=S.autoencoder_data("val"),
                config=S.base_config(task={"type": "regression"}, optim={"name": "sgd", "lr": 1e-5, "momentum": 0.0},
                                     schedule={"name": "constant"}))


def word_rnn_relu_no_clip():
    """A word-level ReLU-RNN language model, recurrent matrix at gain 1.8, 12-word windows, no clipping."""
    return dict(model=S.RNNLM(len(S.LM_WORDS), cell="rnn_relu", recurrent_gain=1.8),
                train_data=S.next_token_windows(150, 1, chars=False, window=12),
                val_data=S.next_token_windows(40, 2, chars=False, window=12),
                config=S.base_config(optim={"name": "sgd", "lr": 0.2, "momentum": 0.9}, schedule={"name": "constant"},
                                     train={"clip_grad_norm": None}))


def income_sigmoid_12_layers():
    """A 12-layer sigmoid MLP on the income table (the pre-ReLU textbook stack)."""
    return dict(model=S.deep_mlp(7, *[32] * 11, 2, act=nn.Sigmoid), train_data=S.income_table(1024, 1, dollars=False),
                val_data=S.income_table(256, 2, dollars=False), config=S.base_config(optim={"name": "sgd", "lr": 0.1}))


def mlp_bias_minus_4():
    """A digits MLP whose hidden biases were initialised to -4 (a 'sparse activations' init): ReLUs dead."""
    return dict(model=S.deep_mlp(64, 128, 128, 10, bias=-4.0), train_data=S.digits("train", flat=True),
                val_data=S.digits("val", flat=True), config=S.base_config(optim={"lr": 1e-3}))


def autoencoder_bottleneck_1():
    """A digits autoencoder squeezed through a single unit."""
    return dict(model=S.autoencoder(1), train_data=S.autoencoder_data("train"), val_data=S.autoencoder_data("val"),
                config=S.base_config(task={"type": "regression"}, optim={"lr": 3e-3}, train={"epochs": 10}))


def income_val_in_dollars():
    """The income table: training z-scored, validation kept in dollars (its scaler never applied)."""
    return dict(model=S.deep_mlp(7, 64, 2), train_data=S.income_table(1024, 1, dollars=False),
                val_data=S.income_table(256, 2, dollars=True), config=S.base_config(optim={"lr": 1e-3}))


def house_features_raw():
    """A house-price MLP fed square feet, year built, rooms and km as the CSV holds them (SGD)."""
    return dict(model=S.deep_mlp(4, 64, 1), train_data=S.house_table(1024, 1, raw=True),
                val_data=S.house_table(256, 2, raw=True),
                config=S.base_config(task={"type": "regression"}, optim={"name": "sgd", "lr": 1e-3, "momentum": 0.9}))


def bce_by_hand_saturates():
    """A user's binary cross-entropy written as -(y log p + (1-y) log(1-p)) on separable data: log(0)."""
    return dict(model=S.deep_mlp(7, 64, 2), train_data=S.income_table(1024, 1, dollars=False),
                val_data=S.income_table(256, 2, dollars=False), loss=S.bce_by_hand,
                config=S.base_config(optim={"lr": 0.05}, schedule={"name": "constant"}, train={"clip_grad_norm": None}))


def digits_cnn_batchnorm_last_batch_1():
    """A digits CNN with a BatchNorm1d head on 1185 images at batch 32 (37 x 32 + 1): the last batch
    of the first epoch holds one image and BatchNorm raises."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(128, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 10))
    return dict(model=model, train_data=S.digits("train", n=1185), val_data=S.digits("val"), config=S.base_config())


def digits_slow_decode():
    """The digits MLP whose Dataset sleeps 3 ms an image (an image decoded in __getitem__)."""
    return dict(model=S.deep_mlp(64, 64, 10), train_data=S.SlowReads(S.digits("train", flat=True, n=400), 0.003),
                val_data=S.digits("val", flat=True), config=S.base_config(train={"epochs": 3}))


def healthy_digits_cnn():
    return dict(model=S.DigitsCNN(), train_data=S.digits("train"), val_data=S.digits("val"),
                config=S.base_config(optim={"lr": 2e-3}))


def healthy_char_gru_lm():
    return dict(model=S.RNNLM(len(S.CHARS)), train_data=S.next_token_windows(60, 1, chars=True, window=16),
                val_data=S.next_token_windows(20, 2, chars=True, window=16), config=S.base_config(optim={"lr": 3e-3}))


def healthy_transformer_text():
    return dict(model=S.TinyTransformer(), train_data=S.sentence_classes(1024, 1), val_data=S.sentence_classes(256, 2),
                config=S.base_config(optim={"lr": 1e-3}))


def healthy_mixed_scale_regression():
    return dict(model=S.deep_mlp(6, 64, 64, 3), train_data=S.mixed_scale_targets(1024, 1),
                val_data=S.mixed_scale_targets(256, 2),
                config=S.base_config(task={"type": "regression"}, optim={"lr": 2e-3}, train={"epochs": 8}))


CASES = {
    "bow_text_labels_shuffled": ("chance_level", bow_text_labels_shuffled),
    "tabular_sgd_lr_3": ("lr_too_high|diverging|nonfinite", tabular_sgd_lr_3),
    "autoencoder_sgd_lr_1e5": ("lr_too_low", autoencoder_sgd_lr_1e5),
    "word_rnn_relu_no_clip": ("exploding_gradients", word_rnn_relu_no_clip),
    "income_sigmoid_12_layers": ("vanishing_gradients", income_sigmoid_12_layers),
    "mlp_bias_minus_4": ("dead_units", mlp_bias_minus_4),
    "autoencoder_bottleneck_1": ("underfitting", autoencoder_bottleneck_1),
    "income_val_in_dollars": ("val_mismatch", income_val_in_dollars),
    "house_features_raw": ("unscaled_inputs", house_features_raw),
    "bce_by_hand_saturates": ("nonfinite", bce_by_hand_saturates),
    "digits_cnn_batchnorm_last_batch_1": ("failed", digits_cnn_batchnorm_last_batch_1),
    "digits_slow_decode": ("data_bound", digits_slow_decode),
    "healthy_digits_cnn": ("healthy", healthy_digits_cnn),
    "healthy_char_gru_lm": ("healthy", healthy_char_gru_lm),
    "healthy_transformer_text": ("healthy", healthy_transformer_text),
    "healthy_mixed_scale_regression": ("healthy", healthy_mixed_scale_regression),
}
