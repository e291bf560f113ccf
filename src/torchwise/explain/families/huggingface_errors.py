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


# torch's own schedulers: Lightning rejecting one of these is a version clash, not the scheduler
TORCH_SCHEDULERS = frozenset(
    "LambdaLR MultiplicativeLR StepLR MultiStepLR ConstantLR LinearLR ExponentialLR SequentialLR"
    " CosineAnnealingLR ChainedScheduler ReduceLROnPlateau CyclicLR CosineAnnealingWarmRestarts"
    " OneCycleLR PolynomialLR".split()
)


def _lightning_scheduler(match: re.Match[str], text: str) -> Explanation:
    scheduler = match.group(1) or match.group(2)
    if scheduler not in TORCH_SCHEDULERS:
        return answer(
            title=f"Lightning does not recognise the scheduler {scheduler}",
            meaning=(
                "Lightning steps the schedulers configure_optimizers returns itself, and only knows"
                f" how for torch's own (subclasses of torch.optim.lr_scheduler.LRScheduler); {scheduler}"
                " is not one."
            ),
            cause=(
                f"{scheduler} is a scheduler of another library (timm's schedulers, a transformers or"
                " hand-written class) whose step() Lightning cannot call the way it calls torch's."
            ),
            fix=(
                "Override LightningModule.lr_scheduler_step(self, scheduler, metric) to step it"
                " (timm: scheduler.step(epoch=self.current_epoch)), or use the equivalent scheduler"
                " from torch.optim.lr_scheduler."
            ),
        )
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


def _lightning_missing_hook(match: re.Match[str], text: str) -> Explanation:
    hook = match.group(1) or match.group(2)
    stage = {"val": "validation", "train": "training", "test": "test", "predict": "prediction"}.get(
        hook.split("_")[0], hook
    )
    if stage in ("test", "prediction"):
        # Trainer.test/predict are called by the script itself, typically right after fit
        method = "test" if stage == "test" else "predict"
        return answer(
            title=f"trainer.{method}() needs {hook}, and none is given",
            meaning=(
                f"trainer.{method}() takes its data from {hook}() on the LightningModule or on a"
                " datamodule passed to the call (or dataloaders=...); neither has it."
            ),
            cause=(
                f"The script calls trainer.{method}() (many do right after fit, once max_steps or"
                f" max_epochs is reached: training itself finished and its checkpoints are saved),"
                f" but no {hook}() is defined, or the datamodule was not passed to that call."
            ),
            fix=(
                f"Pass the data: trainer.{method}(model, datamodule=dm) or dataloaders=..., or"
                f" define {hook}(); if there is no {stage} data, drop the trainer.{method}() call"
                " (or the script's option that skips it)."
            ),
        )
    if re.search(r"\.fit\([^\n]*\bdatamodule\s*=", text):  # round 8: the paste passes one
        return answer(
            title=f"Lightning found no {hook} on the datamodule the script passes",
            meaning=f"trainer.fit(..., datamodule=...) gets its {stage} data from the datamodule's {hook}().",
            cause=(
                f"The datamodule is passed, yet Lightning does not see {hook}(): the project was written for"
                " another Lightning release (its DataModule hooks and their checks changed between releases),"
                f" or the DataModule class does not define {hook} under that name."
            ),
            fix=(
                "Install the Lightning version the project pins (its requirements), or define"
                f" def {hook}(self): return DataLoader(...) on the DataModule for the installed release."
            ),
        )
    return answer(
        title=f"Lightning needs {hook} for the {stage} loop, and none is given",
        meaning=(
            f"The Trainer runs the {stage} loop because the LightningModule defines its step"
            f" (or trainer.{'validate' if stage == 'validation' else 'fit'}() asks for it), and"
            f" looks for {hook}() on the module or a datamodule/dataloader passed to the call."
        ),
        cause=(
            f"No {stage} data reaches the Trainer: {hook}() is not defined, the datamodule or"
            " dataloaders were not passed to trainer.fit/validate, or the data files the"
            f" project reads for {stage} were not configured (an empty path in the config)."
        ),
        fix=(
            f"Give the data: define {hook}() (or pass trainer.fit(model, train_dataloaders=...,"
            " val_dataloaders=...) / a datamodule), or point the config at the files; to run"
            " without validation set Trainer(limit_val_batches=0) (and drop validation_step)."
        ),
    )


def _quantized_to(match: re.Match[str], text: str) -> Explanation:
    call, bits = match.group(1), match.group(2)
    return answer(
        title=f"{call} cannot move or cast a {bits}-bit (bitsandbytes) model",
        meaning=(
            f"A model loaded with load_in_{bits}bit / BitsAndBytesConfig is placed and cast while"
            f" loading (device_map); its {bits}-bit weights cannot be moved or converted again."
        ),
        cause=(
            f"The script calls {call} on the quantized model after from_pretrained, as it would"
            " for a full-precision model (or code written for another version of the script"
            " still has that call)."
        ),
        fix=(
            f"Remove the {call} call and use the model as loaded; choose the device when"
            " loading (device_map='auto' or {'': 0}) and move only the inputs:"
            " inputs.to(model.device)."
            + (
                " Or upgrade bitsandbytes (0.43.2 or newer, with a recent transformers), which can"
                " move a 4-bit model with .to(device)."
                if call == ".to" and "4-bit" in match.group(0)
                else ""
            )
        ),
    )


def _quantized_elsewhere(match: re.Match[str], text: str) -> Explanation:
    bits = match.group(1)
    return answer(
        title=(
            f"accelerate will not train {'an' if bits == '8' else 'a'} {bits}-bit model placed on"
            " another device than the process's"
        ),
        meaning=(
            f"Each training process works on its own GPU; a {bits}-bit (bitsandbytes) model cannot be"
            " moved after loading, so accelerate checks that it already sits on that GPU."
        ),
        cause=(
            f"The {bits}-bit model was loaded with device_map='auto' (spread over several GPUs, or put on"
            " GPU 0) while training runs one process per GPU (accelerate launch, torchrun, DDP)."
        ),
        fix=(
            "Load it on the process's own GPU: device_map={'': Accelerator().process_index} (or"
            " {'': int(os.environ['LOCAL_RANK'])}); or train in one process on one GPU; upgrade"
            " accelerate/transformers if the code follows a newer guide."
        ),
    )


def _peft_backend(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="diffusers needs the PEFT backend for LoRA, and it is not available",
        meaning=(
            "diffusers loads and fuses LoRA weights (load_lora_weights, fuse_lora, set_adapters) through"
            " the peft library; it uses that backend only when peft (and a recent enough transformers)"
            " is installed."
        ),
        cause="peft is not installed in this environment, or peft or transformers is older than diffusers requires.",
        fix="pip install -U peft transformers in the environment that runs the code, then restart it.",
    )


def _tokenizer_class(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1)
    renamed = {"LLaMATokenizer": "LlamaTokenizer"}.get(name)
    cause = (
        f"The checkpoint's tokenizer_config.json names {name}, a spelling from early"
        f" conversions that transformers never released: the class is {renamed}."
        if renamed
        else f"The installed transformers has no {name}: it is older than the model (the class"
        " came in a later release), or the class needs an optional package that is not"
        " installed (sentencepiece, tokenizers), or the model's own code is required"
        " (trust_remote_code=True)."
    )
    fix = (
        f'Edit tokenizer_config.json: "tokenizer_class": "{renamed}" (or load'
        f" {renamed}.from_pretrained(path) directly)."
        if renamed
        else "pip install -U transformers (and sentencepiece); for a model with its own code pass"
        " trust_remote_code=True."
    )
    return answer(
        title=f"transformers cannot find the tokenizer class {name}",
        meaning=(
            "AutoTokenizer reads the class name from the checkpoint's tokenizer_config.json and"
            f" looks it up in the installed transformers; {name} is not there."
        ),
        cause=cause,
        fix=fix,
    )


def _sampling_nan(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="Sampling got probabilities that are NaN, infinite or negative",
        meaning=(
            "generate(do_sample=True) draws the next token with torch.multinomial from the"
            " softmax of the logits; the logits were NaN or inf, so the probabilities are too."
        ),
        cause=(
            "The model's activations overflowed in float16 (a model trained in bfloat16 run in"
            " float16, torch_dtype='auto' or .half() on a GPU without bf16), or the weights are"
            " broken (a bad merge or quantization, NaN after fine-tuning)."
        ),
        fix=(
            "Load in bfloat16 (torch_dtype=torch.bfloat16, on GPUs from Ampere on) or float32;"
            " check one forward pass for NaN (torch.isnan(logits).any()); try do_sample=False to"
            " see whether the logits themselves are broken."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "lightning-invalid-scheduler",
        r"The provided lr scheduler \"?<?(?:torch\.optim\.lr_scheduler\.)?(\w+)[^\n]*\"? is invalid"
        r"|The provided lr scheduler `(\w+)` doesn't follow PyTorch's LRScheduler API",
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
    known(
        "lightning-missing-dataloader",
        r"`(\w+_dataloader)` must be implemented to be used with the Lightning Trainer"
        # Lightning quotes the hook in backticks; pastes (and older pages) turn them into quotes
        r"|No [`'](\w+_dataloader)\(\)[`'] method defined",
        _lightning_missing_hook,
    ),
    known("diffusers-peft-backend", r"PEFT backend is required for this method", _peft_backend),
    known(
        "quantized-model-other-device",
        r"You can't train a model that has been loaded in (4|8)-bit precision on a different device",
        _quantized_elsewhere,
    ),
    known(
        "quantized-model-moved",
        r"`?(\.to|\.cuda|\.half|\.float)`? is not supported for `?(4|8)-bit`?(?: or `?8-bit`?)?"
        r" (?:bitsandbytes )?models",
        _quantized_to,
    ),
    known(
        "hf-tokenizer-class-missing",
        r"Tokenizer class (\w+) does not exist or is not currently imported",
        _tokenizer_class,
    ),
    known(
        "sampling-nan",
        r"probability tensor contains either `?inf`?, `?nan`? or element < 0",
        _sampling_nan,
    ),
]
