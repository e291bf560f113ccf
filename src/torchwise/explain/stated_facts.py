"""What a paste states besides the message, where it rules a family's usual reading out (issue 21, after
round 9's measurement): the batch size its own command sets, the torch and torchvision releases it names,
words that put a stack in the DataLoader's collate, a library that called the loss with arguments it
assembled, and checkpoint keys that are a nested module's stored constants. Each check returns None where
the paste does not say, and the usual reading stands. Pure text work.

>>> stated_batch_sizes("python train.py --batch_size 1 --eval-batch-size 64 --lr 3e-4")
[1]
>>> stated_pairs("torch1.6 with torchvision0.7, and torch 1.7 with torchvision==0.8.1")
[('1.6', '0.7'), ('1.7', '0.8.1')]
"""

from __future__ import annotations

import re

from torchwise.env.compat import companion_version, parse_version
from torchwise.explain.evidence_gate import in_collate
from torchwise.explain.evidence_readings import collated_lengths_reading
from torchwise.explain.explanation import Explanation, answer
from torchwise.explain.paste import Frame, frames, user_frame
from torchwise.explain.paste_readings import FLATTEN

# A batch size the paste sets: "--batch_size 1", "batch-size=1", "batch_size: 1", '"train_batch_size": 1'.
BATCH_SETTING = re.compile(r"""\b([\w-]*batch[_-]?size)["']?\s*(?:=|:|\s)\s*(\d+)\b""", re.IGNORECASE)
# A batch size that is not the training step's (evaluation, test, inference).
NOT_TRAINING = re.compile(r"eval|val|test|infer|predict", re.IGNORECASE)


def stated_batch_sizes(text: str) -> list[int]:
    """The training batch sizes the paste sets (its command line, config or code), in order: not one whose
    name or call says it is another loader's (eval_batch_size, DataLoader(val_set, batch_size=1))."""
    sizes: list[int] = []
    for found in BATCH_SETTING.finditer(text):
        line_start = text.rfind("\n", 0, found.start()) + 1
        opening = text.rfind("(", line_start, found.start())
        arguments = text[opening + 1 : found.start()] if opening >= 0 else ""  # the call's earlier arguments
        if not NOT_TRAINING.search(found.group(1)) and not NOT_TRAINING.search(arguments):
            sizes.append(int(found.group(2)))
    return sizes


def batch_of_one(text: str) -> bool:
    """Every training batch size the paste sets is 1: halving the batch has nothing left to halve."""
    sizes = stated_batch_sizes(text)
    return bool(sizes) and set(sizes) == {1}


def batch_of_one_reading(total: str | None) -> tuple[str, list[str]]:
    """(cause, steps) for a GPU out of memory where the paste's own setting is a batch of one sample."""
    gpu = f"this GPU ({total})" if total else "this GPU"
    return (
        f"The paste runs with a batch size of 1, so the batch is already as small as it goes: one sample's"
        f" forward and backward, with the model's weights, gradients and optimizer state, do not fit in {gpu}"
        " (a model too large for it, long inputs or a high resolution, or several forward passes per step:"
        " extra models, an adversarial attack's iterations), or memory is held by tensors kept from earlier steps.",
        [
            "train in mixed precision (torch.autocast with bf16/fp16) or keep the weights in bf16",
            "recompute activations in backward (torch.utils.checkpoint, a model's gradient_checkpointing_enable())",
            "shrink each step's work: a shorter input or lower resolution, fewer passes per step, fewer trainable"
            " parameters (freeze parts, LoRA), an optimizer with less state (SGD, 8-bit Adam)",
            "free references that keep graphs alive: log loss.item(), not loss; del large tensors you no longer need",
            "a GPU with more memory, or the model split over several GPUs",
        ],
    )


# "torch1.6", "torch 1.7.1", "torch==2.0.1+cu118", "PyTorch version: 1.6.0"; torchvision likewise.
TORCH_RELEASE = re.compile(r"\b(?:py)?torch(?:\s*version)?\s*(?:==|:|=)?\s*v?(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)
VISION_RELEASE = re.compile(r"\btorchvision(?:\s*version)?\s*(?:==|:|=)?\s*v?(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)


def stated_pairs(text: str) -> list[tuple[str, str]]:
    """The torch and torchvision releases the paste names, paired in the order it names them; empty
    where it names one without the other or a different number of each."""
    torches, visions = TORCH_RELEASE.findall(text), VISION_RELEASE.findall(text)
    return list(zip(torches, visions, strict=True)) if torches and len(torches) == len(visions) else []


def matching_pairs(text: str) -> list[tuple[str, str]]:
    """The stated pairs, where every one of them is a torchvision released with its torch."""
    pairs = stated_pairs(text)
    fits = [companion_version("torchvision", torch) == ".".join(map(str, parse_version(vision)[:2]))
            for torch, vision in pairs]
    return pairs if pairs and all(fits) else []


def matching_pair_reading(pairs: list[tuple[str, str]]) -> tuple[str, str]:
    """(cause, fix) for a torchvision operator missing where the paste names releases that belong together."""
    named = " and ".join(f"torch {torch} with torchvision {vision}" for torch, vision in pairs)
    return (
        f"The releases the paste names belong together ({named}), so a torchvision built for another torch"
        " release is not it. torch.ops.torchvision.* exists only once torchvision itself is imported and its"
        " compiled extension has loaded: code (or a TorchScript model) that calls torch.ops.torchvision.nms"
        " without import torchvision before it, or a torchvision of another build flavour than torch (a CPU"
        " build beside a CUDA torch, with the same version numbers).",
        "import torchvision before the call, and call the operator through torchvision (torchvision.ops.nms);"
        " then check that its extension loads: python -c \"import torch, torchvision;"
        " print(torch.ops.torchvision.nms)\". If that fails, reinstall torch and torchvision together from one"
        " index, with the same +cpu or +cuXXX tag.",
    )


# The user's words or code that put the failing stack in the DataLoader's collate.
COLLATE_WORDS = re.compile(r"\bcollate(?:_fn)?\b|\bdefault_collate\b", re.IGNORECASE)
# Words for what a detection sample holds a variable number of.
OBJECT_WORDS = re.compile(r"\b(?:objects?|boxe?s|bbox(?:es)?|bounding box|detections?|annotations?)\b", re.IGNORECASE)


def collate_in_words(text: str) -> bool:
    """The paste names the collate (collate_fn, default_collate) where it shows no traceback frames."""
    return bool(COLLATE_WORDS.search(text))


def collated(text: str, before: int) -> bool:
    """The stack is the DataLoader's collate: its frames are in the traceback, or, where the paste
    shows no frames, its words name the collate."""
    return in_collate(text, before) or (not frames(text) and collate_in_words(text))


def collated_rows_reading(text: str, first: int, second: int) -> tuple[str, str]:
    """(cause, fix) for a batch's samples whose first dimension differs: objects per image where the
    paste calls them objects or boxes, else a variable number of rows per sample."""
    if not OBJECT_WORDS.search(text):
        return collated_lengths_reading(first, second)
    return (
        f"Each image has its own number of objects (boxes: {first} and {second} rows here), and the DataLoader's"
        " collate stacks the samples of a batch, which needs every sample's target to have the same shape.",
        "Give the DataLoader a collate_fn that stacks the images and keeps the targets as a list (a detection"
        " collate: images, targets = zip(*batch); return torch.stack(images), list(targets)), as the project's"
        " own detection_collate or collate_fn does; padding would add boxes that are not there.",
    )


# A library line that calls a function it was handed with the arguments it assembled: self.func(*args, **kwargs).
TORCH_PACKAGE = re.compile(r"(?:site|dist)-packages[\\/]+torch[\\/]|^torch[\\/]")
DISPATCH = re.compile(r"\b[\w.]+\(\s*\*\w+\s*,\s*\*\*\w+\s*\)")


def library_dispatch(text: str, before: int) -> Frame | None:
    """The frame that called the loss, when it is an installed library's line calling a stored function
    with arguments it assembled (a lazy-evaluation or batching wrapper): the user's call is not on the path."""
    # torch's own frames are the installed package's (an environment named "torch" is not torch)
    found = [frame for start, frame in frames(text) if start < before and not TORCH_PACKAGE.search(frame.file)]
    owner = found[-1] if found else None
    if owner is None or not owner.in_library or not DISPATCH.search(owner.source):
        return None
    return owner


def library_dispatch_reading(frame: Frame, rows: int, targets: int) -> tuple[str, str]:
    package = frame.package or "a library"
    return (
        f"The loss was called by {package}'s own code ({frame.place}: {frame.source}), which runs the computation"
        f" you handed it with arguments it assembled itself (lazily, or split into batches of its own): the output"
        f" it passed has {rows} rows and the target {targets}, so it split or batched one of the two and not"
        " the other.",
        f"Run the same step without {package} (plain tensors): if the shapes agree there, the mismatch is"
        f" {package}'s handling of this loss; update it, or report it to its project with this traceback, and"
        " keep the plain step meanwhile.",
    )


def one_target(rows: int) -> Explanation:
    """A target of one item against many output rows: every count is a multiple of 1, so the numbers are
    no evidence of a view that folded positions into the batch; with a batch of one sample, the output's
    first dimension is not the batch (the mirror of a target that lost its batch dimension)."""
    return answer(
        title=f"One target for {rows} output rows: the output's first dimension is not the batch",
        meaning="The loss pairs each output row with one target; the counts must be equal.",
        cause=(
            f"The target holds one value (one label for a batch of one sample) while the output has {rows} rows:"
            f" one per position of that sample (per-token logits flattened over a sequence of {rows}, per-pixel"
            " scores) scored against one label for the whole sample, such as labels built one per sequence where"
            " the loss wants one per token; or a view with a hard-coded size (the last batch of the epoch holds"
            " one sample)."
        ),
        fix=(
            f"Decide what is scored per item: for a label per position, build the target with one label per"
            f" position ([1, {rows}], flattened alike: target.view(-1)); for one label per sample, pool or take"
            " one position's output before the head. Take sizes from the tensors, never a hard-coded batch size."
        ),
    )


def flattened_per_position(text: str, before: int) -> Explanation | None:
    """The count-less wording ("Expected input batch_size to match target batch_size", a title line) where
    the user's line flattens both the output and the target (a per-token or per-pixel loss): they cover
    different numbers of positions. None where the paste shows no such line: without counts nothing else tells."""
    frame = user_frame(text, before)
    if frame is None or len(FLATTEN.findall(frame.source)) < 2:
        return None
    return answer(
        title="The output and the target were flattened to different numbers of positions",
        meaning="The loss pairs each output row with one target; the counts must be equal.",
        cause=(
            f"Your line {frame.place} ({frame.source}) flattens both sides per position, so the output covers"
            " another number of positions than the target: labels of another length than the output's sequence"
            " (token labels not padded or truncated to the input ids' length), or a width written into the view"
            " that is not the output's last dimension."
        ),
        fix=(
            "Print both shapes before that line; pad or truncate the labels to the input's length in the dataset"
            " or collator (the same max_length for both), and take the width from the tensor:"
            " output.view(-1, output.size(-1))."
        ),
    )


# The tensors only a layer's learned weights are called; a buffer-only module's keys are none of them.
LAYER_TENSORS = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")


def stored_constants(keys: list[str]) -> str | None:
    """The module, nested two or more levels deep, whose extra keys are all tensors other than a layer's
    weights ("lpips.net.scaling_layer.shift", "...scale"): constants it stores (buffers), not a part
    with layers that an option would switch off."""
    parents = {key.rpartition(".")[0] for key in keys}
    if len(parents) != 1 or any(key.rpartition(".")[2] in LAYER_TENSORS for key in keys):
        return None
    parent = parents.pop()
    return parent if parent.count(".") >= 2 else None


def stored_constants_reading(module: str, count: int) -> tuple[str, str]:
    leaves = "unexpected keys" if count > 1 else "unexpected key"
    return (
        f"the {count} {leaves} are tensors of one nested module, {module}, and none is a layer's weight or bias:"
        f" constants it stores beside its layers (buffers such as normalization shifts and scales, a grid). The"
        f" code that saved the checkpoint stored them and the installed code no longer registers or saves them"
        f" (another release of the project, or of the library that defines {module.removeprefix('module.')}),"
        " not a model built with fewer parts",
        "install the release of that library the checkpoint was saved with; or, since the installed module"
        " rebuilds its constants itself, load with strict=False after checking that only these keys are"
        " unexpected",
    )
