"""Every bad batch, output, loss, metric or monitor is a typed error with a hint, before any step."""

from __future__ import annotations

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

import torchwise
from torchwise.errors import ConfigError, DataError, ModelError, TorchwiseError


class Samples(Dataset):
    def __init__(self, make, n: int = 8) -> None:
        self.make, self.n = make, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        return self.make(i)


def fails_before_training(tmp_path, error: type[TorchwiseError], model, train, val=None, **kwargs):
    """Run fit, expect ``error``, and check that no parameter moved (no optimizer step ran)."""
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(error) as info:
        torchwise.fit(model, train, val, runs_dir=tmp_path, config=quiet_config(train={"epochs": 1, "batch_size": 4}),
                      **kwargs)
    assert type(info.value) is error
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key
    return info.value


class KeywordModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.fc(input_ids)


def test_dict_batch_key_the_model_does_not_take(tmp_path):
    data = Samples(lambda i: {"input_ids": torch.ones(3), "labels": i % 2})
    err = fails_before_training(tmp_path, ModelError, KeywordModel(), data)
    assert "cannot be called with the training batch's inputs {'input_ids': Tensor[2, 3] float32, " \
           "'labels': Tensor[2] int64}" in err.message
    assert "unexpected keyword argument 'labels'" in err.message
    assert "a dict batch calls model(**batch)" in err.hint and "['input_ids', 'labels']" in err.hint


def test_dict_batch_without_target_and_no_model_loss(tmp_path):
    data = Samples(lambda i: {"input_ids": torch.ones(3)})
    err = fails_before_training(tmp_path, DataError, KeywordModel(), data)
    assert "no target and the model returned no `loss`" in err.message and "'labels'" in err.hint


def test_three_item_samples(tmp_path):
    data = Samples(lambda i: (torch.ones(3), torch.ones(2), i % 2))
    err = fails_before_training(tmp_path, DataError, nn.Linear(3, 2), data)
    assert "this one has 3 items: (Tensor[2, 3] float32, Tensor[2, 2] float32, Tensor[2] int64)" in err.message
    assert "((x1, x2), y)" in err.hint


def test_validation_batches_that_do_not_collate_fail_before_the_first_epoch(tmp_path):
    train = Samples(lambda i: ({"tokens": torch.ones(4)}, i % 2))
    val = Samples(lambda i: ({"tokens": torch.ones(3 + i)}, i % 2))

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, tokens):
            return self.fc(tokens)

    err = fails_before_training(tmp_path, DataError, Model(), train, val)
    assert err.message.startswith("the validation samples do not batch: the samples cannot be stacked into a "
                                  "batch at sample[0]['tokens']: they hold Tensor[3] float32, Tensor[4] float32")
    assert "pad_sequence" in err.hint


def test_a_raw_dataloader_with_torchs_default_collate_gets_the_same_clear_error(tmp_path):
    val = DataLoader(Samples(lambda i: (torch.ones(2 + i), 0)), batch_size=4)
    err = fails_before_training(tmp_path, DataError, nn.Linear(2, 2), tiny_two_features(), val)
    assert "at sample[0]" in err.message


def tiny_two_features() -> TensorDataset:
    data = tiny_classification(n=16, features=2, classes=2)
    return data


def test_language_model_logits_in_the_wrong_layout(tmp_path):
    x, y = torch.randint(0, 5, (8, 6)), torch.randint(0, 5, (8, 6))

    class Transposed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(5, 4)
            self.head = nn.Linear(4, 5)

        def forward(self, x):
            return self.head(self.embed(x)).transpose(1, 2)[:, :, :5]  # [B, V, T-1]: a wrong slice

    err = fails_before_training(tmp_path, ModelError, Transposed(), TensorDataset(x, y))
    assert "model output has shape [2, 5, 5] but classification targets have shape [2, 6]" in err.message
    assert "segmentation wants logits [B, C, 6]" in err.hint and "a sequence model wants [B, 6, C]" in err.hint


def test_one_hot_targets_for_classification_point_to_multilabel(tmp_path):
    x, y = torch.randn(8, 3), torch.eye(4)[torch.arange(8) % 4]
    err = fails_before_training(tmp_path, ModelError, nn.Linear(3, 4), TensorDataset(x, y))
    assert "hold one value per class" in err.message and "task.type=multilabel" in err.hint


def test_multilabel_output_with_the_wrong_width(tmp_path):
    x, y = torch.randn(8, 3), (torch.rand(8, 5) > 0.5).float()
    with pytest.raises(ModelError) as info:
        torchwise.fit(nn.Linear(3, 4), TensorDataset(x, y), runs_dir=tmp_path,
                      config=quiet_config(task={"type": "multilabel"}, train={"epochs": 1}))
    assert "[2, 4] but the multi-label targets have shape [2, 5]" in info.value.message
    assert "output [5] per sample" in info.value.hint


def test_a_metric_that_fails_is_named(tmp_path):
    def broken(logits, target):
        return logits[:, 7].mean()  # index out of range

    err = fails_before_training(tmp_path, DataError, nn.Linear(6, 3), tiny_classification(n=16),
                                tiny_classification(n=8, seed=1), metrics={"broken": broken})
    assert err.message.startswith("metric 'broken' fails on the training batch (logits Tensor[2, 3] float32, "
                                  "target Tensor[2] int64): IndexError")


def test_a_loss_that_is_not_one_number(tmp_path):
    err = fails_before_training(tmp_path, ModelError, nn.Linear(6, 3), tiny_classification(n=16),
                                loss=nn.CrossEntropyLoss(reduction="none"))
    assert err.message == "the loss must be one number; it is Tensor[2] float32"
    assert "reduction='mean'" in err.hint


def test_a_monitor_that_no_evaluation_produces(tmp_path):
    model = nn.Linear(6, 3)
    with pytest.raises(ConfigError) as info:
        torchwise.fit(model, tiny_classification(n=16), tiny_classification(n=8, seed=1), runs_dir=tmp_path,
                      config=quiet_config(train={"epochs": 1, "monitor": "val_f1"}))
    assert info.value.message == "train.monitor='val_f1' is not a value this run produces"
    assert "train_loss, val_loss, val_accuracy" in info.value.hint and "task.metrics" in info.value.hint
    with pytest.raises(ConfigError, match="there is no validation data"):
        torchwise.fit(model, tiny_classification(n=16), runs_dir=tmp_path,
                      config=quiet_config(train={"epochs": 1, "monitor": "val_accuracy"}))


def test_an_output_without_loss_or_logits(tmp_path):
    class Odd(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(6, 3)

        def forward(self, x):
            return {"scores": self.fc(x)}

    err = fails_before_training(tmp_path, ModelError, Odd(), tiny_classification(n=16))
    assert "{'scores': Tensor[2, 3] float32}: no tensor, no `loss` and no `logits`" in err.message


def test_scheduler_factory_that_returns_something_else(tmp_path):
    err = fails_before_training(tmp_path, ConfigError, nn.Linear(6, 3), tiny_classification(n=16),
                                scheduler=lambda optimizer: 0.5)
    assert "returned float, not an LR scheduler" in err.message
