"""Tiny offline Hugging Face pieces for tests: a word-level tokenizer trained on a few lines with
`tokenizers`, a learnable toy text task, and BERT/GPT-2 models built from small configs."""

from __future__ import annotations

import os
import random
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing in these tests may reach the Hub
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

GOOD = ["good", "great", "fine", "lovely", "nice"]
BAD = ["bad", "awful", "poor", "grim", "sad"]
FILLER = ["the", "a", "film", "was", "very", "plot", "and", "it", "so", "day"]


def toy_texts(n: int, seed: int = 0) -> tuple[list[str], list[int]]:
    """Sentences of 3 to 11 words; label 1 when a 'good' word is in it, else 0 (a 'bad' word is)."""
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(n):
        label = i % 2
        words = [rng.choice(FILLER) for _ in range(rng.randint(2, 10))]
        words.insert(rng.randint(0, len(words)), rng.choice(GOOD if label else BAD))
        texts.append(" ".join(words))
        labels.append(label)
    return texts, labels


def train_tokenizer(folder: Path):
    """A word-level tokenizer of the toy vocabulary, saved with save_pretrained into ``folder``."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    tokenizer.train_from_iterator([" ".join(GOOD + BAD + FILLER)], trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="[PAD]", unk_token="[UNK]",
                                   cls_token="[CLS]", sep_token="[SEP]")
    fast.save_pretrained(str(folder))
    return fast


def bert_config(vocab_size: int, **extra):
    from transformers import BertConfig

    return BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
                      attention_probs_dropout_prob=0.0, **extra)


def tiny_bert(vocab_size: int, num_labels: int = 2, seed: int = 0):
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(seed)
    return BertForSequenceClassification(bert_config(vocab_size, num_labels=num_labels))
