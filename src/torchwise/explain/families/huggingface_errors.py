"""Known errors from training with Hugging Face transformers and Lightning: a tokenizer that cannot pad,
a Trainer whose model returned no loss, a Lightning older than the torch it runs with.

Both come from the data, not the model: the batches lack what the model or the collator needs.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _no_pad_token(match: re.Match[str], text: str) -> Explanation:
    classification = bool(match.group(1))
    cause = (
        "The model's config has no pad_token_id, so a sequence-classification head cannot find"
        " the last real token of each padded row."
        if classification
        else "The tokenizer has no pad token: GPT-2, GPT-NeoX, Llama and most decoder-only"
        " tokenizers ship without one, and padding=True (or a padding collator) needs it."
    )
    return answer(
        title="The tokenizer has no padding token, and the batch needs padding",
        meaning=(
            "Sequences of different lengths are padded to one length to form a batch; padding"
            " needs a pad token id, and none is defined."
        ),
        cause=cause,
        fix=(
            "Reuse the end-of-sequence token as the pad token (the attention mask hides the"
            " padding, so which token it is does not matter):\n"
            "    tokenizer.pad_token = tokenizer.eos_token\n"
            "    model.config.pad_token_id = tokenizer.pad_token_id\n"
            "or add a new one and grow the embeddings:"
            " tokenizer.add_special_tokens({'pad_token': '[PAD]'});"
            " model.resize_token_embeddings(len(tokenizer))."
        ),
    )


def _no_loss(match: re.Match[str], text: str) -> Explanation:
    keys, inputs = match.group(1), match.group(2)
    received = [name for name in inputs.split(",") if name]
    if "labels" in received:
        cause = (
            f"The batches do carry labels ({inputs}), but the model class computes no loss from"
            " them: a bare AutoModel (no task head), or a custom forward or wrapper that ignores"
            " labels."
        )
        fix = (
            "Load the class with the task head (AutoModelForCausalLM,"
            " AutoModelForSequenceClassification, ...) or return the loss from your forward; for"
            " a custom loss, subclass Trainer and override compute_loss."
        )
    else:
        cause = (
            f"The batches carry no labels: the model received only {inputs}. The label column"
            " is missing or has another name, or the Trainer dropped it (remove_unused_columns"
            " removes every column the model's forward does not name)."
        )
        fix = (
            "Give the batches a 'labels' field: name the column labels (Trainer renames label),"
            " set TrainingArguments(label_names=[...]) for another name, or for language"
            " modelling use DataCollatorForLanguageModeling(tokenizer, mlm=False), which builds"
            " labels from input_ids."
        )
    return answer(
        title=f"The Trainer got no loss from the model (outputs: {keys})",
        meaning=(
            "Trainer trains on outputs.loss; a transformers model computes it only when the"
            f" batch holds labels for it. The model returned {keys} only."
        ),
        cause=cause,
        fix=fix,
    )


def _lightning_scheduler(match: re.Match[str], text: str) -> Explanation:
    scheduler = match.group(1)
    return answer(
        title=f"Lightning does not recognise the scheduler {scheduler}",
        meaning=(
            "Lightning checks that configure_optimizers returns an LR scheduler by its class;"
            f" it found {scheduler} not to be one."
        ),
        cause=(
            "The installed pytorch_lightning is older than the installed torch: before Lightning"
            " 1.9 it checks for torch.optim.lr_scheduler._LRScheduler, and torch 2.0 derives the"
            " schedulers from a new base class, LRScheduler."
        ),
        fix=(
            "Upgrade Lightning to a release that knows torch 2 (pip install -U"
            " pytorch-lightning), or keep the versions the project pins (torch < 2.0 with the old"
            " Lightning)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "lightning-invalid-scheduler",
        r"The provided lr scheduler \"?<?(?:torch\.optim\.lr_scheduler\.)?(\w+)[^\n]*\"? is invalid",
        _lightning_scheduler,
    ),
    known(
        "hf-no-pad-token",
        r"Asking to pad but the tokenizer does not have a padding token"
        r"|Cannot handle batch sizes > 1 if no padding token is (defined)",
        _no_pad_token,
    ),
    known(
        "hf-no-loss",
        r"The model did not return a loss from the inputs, only the following keys: ([\w,]+)\."
        r" For reference, the inputs it received are ([\w,]+)",
        _no_loss,
    ),
]
