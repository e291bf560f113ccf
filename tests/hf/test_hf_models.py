"""transformers models in torchwise runs, offline: token classification and a causal LM with
-100 labels, gradient checkpointing, LoRA through peft, and `export --format hf`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tests.helpers import quiet_config, step_losses
from tests.hf.tiny import bert_config, tiny_bert, toy_texts, train_tokenizer
from torch import nn

import torchwise
from torchwise.config import ModelConfig
from torchwise.errors import ModelError
from torchwise.models import with_options
from torchwise.runs.folder import read_jsonl

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hf_text_classification.yaml"


def rows(tokenizer, n: int, *, per_token: bool = False, causal: bool = False):
    import datasets

    texts, labels = toy_texts(n, seed=0)
    encoded = tokenizer(texts)
    data = {"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"]}
    if per_token:  # tag each token: 1 on the sentiment word, 0 elsewhere
        good_bad = set(tokenizer.convert_tokens_to_ids(["good", "great", "fine", "lovely", "nice",
                                                        "bad", "awful", "poor", "grim", "sad"]))
        data["labels"] = [[int(t in good_bad) for t in ids] for ids in encoded["input_ids"]]
    elif causal:
        data["labels"] = encoded["input_ids"]
    else:
        data["label"] = labels
    return datasets.Dataset.from_dict(data)


def test_token_classification_pads_labels_with_minus_100_and_learns(tmp_path):
    from transformers import BertForTokenClassification

    tokenizer = train_tokenizer(tmp_path / "tok")
    torch.manual_seed(0)
    model = BertForTokenClassification(bert_config(len(tokenizer), num_labels=2))
    result = torchwise.fit(model, rows(tokenizer, 96, per_token=True), rows(tokenizer, 32, per_token=True),
                           tokenizer=tokenizer, runs_dir=tmp_path, quiet=True,
                           config=quiet_config(train={"epochs": 4, "batch_size": 16}, optim={"lr": 3e-3}))
    assert result.status == "completed" and result.summary["samples"] == 4 * 96  # sequences, not tokens
    assert result.summary["final"]["val_accuracy"] >= 0.97  # per token, padding (-100) skipped
    from transformers import DataCollatorForTokenClassification

    batch = DataCollatorForTokenClassification(tokenizer)([rows(tokenizer, 2, per_token=True)[i] for i in range(2)])
    assert (batch["labels"] == -100).sum() == (batch["attention_mask"] == 0).sum() > 0


def test_a_causal_lm_trains_on_its_own_loss_with_padding_ignored(tmp_path):
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = train_tokenizer(tmp_path / "tok")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2, n_positions=64,
                                       pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.cls_token_id,
                                       eos_token_id=tokenizer.sep_token_id))
    result = torchwise.fit(model, rows(tokenizer, 96, causal=True), tokenizer=tokenizer, runs_dir=tmp_path,
                           quiet=True, config=quiet_config(train={"epochs": 4, "batch_size": 16}, optim={"lr": 3e-3}))
    losses = step_losses(result.run_dir)
    # random filler words: the loss can fall only to their entropy (measured 3.20 -> 2.67)
    assert result.status == "completed" and losses[-1] < 0.9 * losses[0]
    # The loss is the model's own over real tokens: padded batches and one-row batches agree.
    model.eval()
    data = rows(tokenizer, 4, causal=True)
    from transformers import DataCollatorForTokenClassification

    padded = DataCollatorForTokenClassification(tokenizer)([data[i] for i in range(2)])
    with torch.no_grad():
        alone = model(**{k: torch.tensor([v]) for k, v in data[1].items()}).loss
        both = model(**padded).logits
    ids = torch.tensor(data[1]["input_ids"])
    own = nn.functional.cross_entropy(both[1, : len(ids) - 1], ids[1:])
    assert torch.allclose(own, alone, atol=1e-5)


def test_gradient_checkpointing_gives_the_same_losses_as_without(tmp_path):
    tokenizer = train_tokenizer(tmp_path / "tok")
    runs = {}
    for on in (False, True):
        model = tiny_bert(len(tokenizer))
        result = torchwise.fit(model, rows(tokenizer, 32), tokenizer=tokenizer, runs_dir=tmp_path / str(on),
                               quiet=True, config=quiet_config(train={"max_steps": 2, "batch_size": 16},
                                                               model={"gradient_checkpointing": on}))
        assert model.is_activation_checkpointing is on
        runs[on] = step_losses(result.run_dir)
    assert len(runs[True]) == 2 and runs[True] == pytest.approx(runs[False], abs=1e-6)


def test_gradient_checkpointing_on_a_model_without_it_is_a_clear_error():
    with pytest.raises(ModelError, match="has no gradient_checkpointing_enable") as info:
        with_options(nn.Linear(2, 2), ModelConfig(gradient_checkpointing=True))
    assert "torch.utils.checkpoint" in info.value.hint


def test_lora_trains_only_the_adapters_and_load_model_gives_the_trained_predictions(tmp_path):
    tokenizer = train_tokenizer(tmp_path / "tok")
    model = tiny_bert(len(tokenizer))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    lora = {"r": 4, "alpha": 8, "target_modules": ["query", "value"]}
    result = torchwise.fit(model, rows(tokenizer, 64), rows(tokenizer, 16), tokenizer=tokenizer, runs_dir=tmp_path,
                           quiet=True, config=quiet_config(train={"epochs": 3, "batch_size": 16}, optim={"lr": 1e-2},
                                                           model={"lora": lora}, checkpoint={"enabled": True}))
    (event,) = [e for e in read_jsonl(result.run_dir / "events.jsonl") if e.get("event") == "lora"]
    # 2 layers x (query, value) x (A [4, 32] + B [32, 4]), and the classifier head peft keeps trainable
    assert event["trainable"] == 2 * 2 * (4 * 32 + 32 * 4) + (32 * 2 + 2)
    after = {k.replace(".base_layer", ""): v for k, v in model.state_dict().items()}  # peft's names for the base
    frozen = [k for k in before if "classifier" not in k]
    assert len(frozen) > 30 and all(torch.equal(before[k], after[k]) for k in frozen)  # the base never moved
    batch = {k: torch.tensor([v]) for k, v in rows(tokenizer, 3)[2].items() if k != "label"}
    model.eval()
    with torch.no_grad():
        trained = model(**batch).logits
    loaded = torchwise.load_model(result.run_dir, tiny_bert(len(tokenizer), seed=1), which="last")
    assert hasattr(loaded, "peft_config")
    saved = torchwise.checkpoints.checkpoint.load_checkpoint(result.run_dir / "checkpoints" / "last").model_state
    assert any("lora_A" in key for key in saved)
    with torch.no_grad():
        assert torch.equal(loaded(**batch).logits, trained)
        merged = loaded.merge_and_unload()
        assert torch.allclose(merged(**batch).logits, trained, atol=1e-5)


def train_example(tmp_path, *overrides: str):
    from torchwise.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["train", str(EXAMPLE), "--run-dir", str(tmp_path), "-q", *overrides])
    assert exit_.value.code in (0, None)
    return tmp_path / "hf-text"


@pytest.mark.slow
def test_the_yaml_example_trains_a_tiny_bert_from_a_csv_and_a_tokenizer_folder(tmp_path):
    run = train_example(tmp_path)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["final"]["val_accuracy"] >= 0.95  # measured: 1.0


def test_export_hf_loads_with_from_pretrained_in_a_fresh_process_with_the_same_logits(tmp_path):
    from torchwise.cli import main

    run = train_example(tmp_path, "train.max_steps=3")
    with pytest.raises(SystemExit) as exit_:
        main(["export", str(run), "--format", "hf"])
    assert exit_.value.code in (0, None)
    folder = run / "export" / "hf"
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in folder.iterdir()}
    model = torchwise.load_model(run)
    from torchwise.hf.data import load_tokenizer

    encoded = load_tokenizer(folder)(["the film was lovely", "awful plot"], padding=True, return_tensors="pt")
    with torch.no_grad():
        expected = model(**encoded).logits
    script = ("import json, sys, torch; from transformers import AutoModelForSequenceClassification, AutoTokenizer; "
              f"m = AutoModelForSequenceClassification.from_pretrained({str(folder)!r}).eval(); "
              f"t = AutoTokenizer.from_pretrained({str(folder)!r}); "
              "e = t(['the film was lovely', 'awful plot'], padding=True, return_tensors='pt'); "
              "print(json.dumps(m(**e).logits.tolist())); "
              "assert 'torchwise' not in sys.modules")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "2"})
    assert torch.allclose(torch.tensor(json.loads(out.stdout)), expected, atol=1e-5)
