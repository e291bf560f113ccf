"""The YAML route for Hugging Face, offline: `model.target` naming transformers' `from_pretrained`
with a local folder, and the `hf` data source reading json, parquet and `save_to_disk` folders."""

from __future__ import annotations

import json

import pytest
import torch
import yaml
from tests.helpers import step_losses
from tests.hf.tiny import tiny_bert, toy_texts, train_tokenizer

import torchwise


def write_rows(folder, n: int, kind: str, *, seed: int = 0):
    """The toy task as a csv/json/parquet file or a save_to_disk folder; labels are words."""
    import datasets

    texts, labels = toy_texts(n, seed=seed)
    rows = datasets.Dataset.from_dict({"text": texts, "label": ["positive" if y else "negative" for y in labels]})
    path = folder / (f"rows.{kind}" if kind != "disk" else "rows")
    {"csv": rows.to_csv, "json": rows.to_json, "parquet": rows.to_parquet, "disk": rows.save_to_disk}[kind](str(path))
    return path, labels


def train_yaml(folder, config: dict, *overrides: str):
    from torchwise.cli import main

    (folder / "run.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(SystemExit) as exit_:
        main(["train", str(folder / "run.yaml"), "--run-dir", str(folder / "runs"), "-q", *overrides])
    assert exit_.value.code in (0, None)
    return folder / "runs" / config["name"]


def config_for(data_path, *, model: dict, **train) -> dict:
    return {"name": "hf-yaml", "data": {"source": "hf", "path": str(data_path), "tokenizer": "tok",
                                        "text_column": "text", "label_column": "label", "max_length": 32},
            "model": model, "train": {"batch_size": 16, **train}, "optim": {"lr": 3e-3, "weight_decay": 0.0},
            "log": {"progress": "off", "every_n_steps": 1}}


def test_model_target_from_pretrained_with_a_local_folder_trains_from_the_saved_weights(tmp_path):
    tokenizer = train_tokenizer(tmp_path / "tok")
    saved = tiny_bert(len(tokenizer), seed=7)
    saved.save_pretrained(str(tmp_path / "bert"))
    data, _ = write_rows(tmp_path, 240, "csv")
    model = {"target": "transformers:AutoModelForSequenceClassification.from_pretrained",  # as the docs say
             "kwargs": {"pretrained_model_name_or_path": "bert", "num_labels": 2}}  # relative: from the YAML's folder
    run = train_yaml(tmp_path, config_for(data.name, model=model, epochs=8))
    summary = json.loads((run / "summary.json").read_text())
    losses = step_losses(run)
    assert summary["status"] == "completed" and summary["final"]["val_accuracy"] >= 0.95  # measured: 1.0
    assert losses[-1] < 0.1 * losses[0]  # measured: 0.693 -> 0.0078 over 96 steps
    trained = torchwise.load_model(run, which="last")
    assert type(trained).__name__ == "BertForSequenceClassification"
    # Rows no batch reaches get no gradient, and Adam without weight decay leaves them as they were:
    # positions past max_length (32) still hold the saved model's values, not a fresh init's.
    unused = slice(33, 64)
    positions = "bert.embeddings.position_embeddings.weight"
    start, fresh, end = (m.state_dict()[positions][unused] for m in (saved, tiny_bert(len(tokenizer), seed=0), trained))
    assert torch.equal(end, start) and not torch.equal(start, fresh)
    # ...and the rows it did train moved away from the saved ones.
    used = slice(0, 8)
    assert not torch.equal(trained.state_dict()[positions][used], saved.state_dict()[positions][used])


@pytest.mark.parametrize("kind", ["json", "parquet", "disk"])
def test_the_hf_source_reads_json_parquet_and_save_to_disk_folders(tmp_path, kind):
    from torchwise.hf.data import load_hf_source

    tokenizer = train_tokenizer(tmp_path / "tok")
    path, labels = write_rows(tmp_path, 40, kind)
    rows = load_hf_source(path, tokenizer_path=tmp_path / "tok", text_column="text", label_column="label",
                          max_length=32)
    assert len(rows) == 40 and rows.classes == ["negative", "positive"]  # words sorted to 0, 1
    assert [int(row["labels"]) for row in rows.rows] == labels
    assert rows[3]["input_ids"] == tokenizer(toy_texts(40, seed=0)[0][3])["input_ids"]
    tiny_bert(len(tokenizer)).save_pretrained(str(tmp_path / "bert"))
    model = {"target": "transformers:BertForSequenceClassification.from_pretrained",
             "kwargs": {"pretrained_model_name_or_path": "bert"}}
    run = train_yaml(tmp_path, config_for(path.name, model=model, max_steps=2))
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["steps"] == 2 and summary["samples"] == 2 * 16
    assert len(step_losses(run)) == 2
