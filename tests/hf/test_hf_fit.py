"""fit() on Hugging Face datasets, offline: a `label` column, rows of different lengths, padding."""

from __future__ import annotations

import pytest
import torch
from tests.helpers import quiet_config
from tests.hf.tiny import tiny_bert, toy_texts, train_tokenizer

import torchwise
from torchwise.errors import DataError


def tokenized(tokenizer, n: int, seed: int):
    import datasets

    texts, labels = toy_texts(n, seed=seed)
    rows = datasets.Dataset.from_dict({"text": texts, "label": labels})
    return rows.map(lambda b: tokenizer(b["text"]), batched=True)


def test_a_tiny_bert_learns_from_an_hf_dataset_with_label_and_rows_of_different_lengths(tmp_path):
    tokenizer = train_tokenizer(tmp_path / "tok")
    train, val = tokenized(tokenizer, 160, seed=0), tokenized(tokenizer, 40, seed=1)
    assert len({len(ids) for ids in train["input_ids"]}) > 5  # the rows really differ in length
    model = tiny_bert(len(tokenizer))
    result = torchwise.fit(model, train, val, tokenizer=tokenizer, runs_dir=tmp_path, quiet=True,
                           config=quiet_config(train={"epochs": 6, "batch_size": 16}, optim={"lr": 3e-3}))
    assert result.status == "completed"
    assert result.summary["final"]["val_accuracy"] >= 0.95
    assert result.summary["samples"] == 6 * 160


def test_a_datasetdict_gives_its_train_and_validation_splits(tmp_path):
    import datasets

    tokenizer = train_tokenizer(tmp_path / "tok")
    splits = datasets.DatasetDict({"train": tokenized(tokenizer, 32, 0), "validation": tokenized(tokenizer, 8, 1)})
    result = torchwise.fit(tiny_bert(len(tokenizer)), splits, tokenizer=tokenizer, runs_dir=tmp_path, quiet=True,
                           config=quiet_config(train={"epochs": 1, "batch_size": 8}))
    assert result.summary["steps"] == 4 and "val_accuracy" in result.summary["final"]


def test_rows_of_different_lengths_without_a_tokenizer_name_the_key(tmp_path):
    tokenizer = train_tokenizer(tmp_path / "tok")
    with pytest.raises(DataError, match=r"sample\['input_ids'\]") as info:
        torchwise.fit(tiny_bert(len(tokenizer)), tokenized(tokenizer, 16, 0), runs_dir=tmp_path, quiet=True,
                      config=quiet_config(train={"epochs": 1}))
    assert "DataCollatorWithPadding" in info.value.hint


def test_rows_of_one_length_train_without_a_tokenizer(tmp_path):
    import datasets

    rows = datasets.Dataset.from_dict({"input_ids": torch.randint(4, 20, (24, 7)).tolist(), "label": [0, 1] * 12})
    result = torchwise.fit(tiny_bert(20), rows, runs_dir=tmp_path, quiet=True,
                           config=quiet_config(train={"epochs": 1, "batch_size": 8}))
    assert result.status == "completed" and result.summary["steps"] == 3


def test_an_hf_iterable_dataset_streams_through_the_stream_loader(tmp_path):
    import datasets

    rows = datasets.Dataset.from_dict({"input_ids": torch.randint(4, 20, (24, 7)).tolist(), "label": [0, 1] * 12})
    stream = rows.to_iterable_dataset()
    result = torchwise.fit(tiny_bert(20), stream, runs_dir=tmp_path, quiet=True,  # a stream has no length:
                           config=quiet_config(train={"epochs": 2, "batch_size": 8}, schedule={"name": "constant"}))
    assert result.status == "completed" and result.summary["samples"] == 48 and result.summary["steps"] == 6
