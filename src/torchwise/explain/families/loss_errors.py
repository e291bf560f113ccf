"""Known errors where a loss gets an output and a target that do not fit each other.

The numbers in the message decide between causes: a target with exactly k times the output's
rows is one-hot (k classes) flattened; an output with k times the target's rows was folded or
concatenated along the batch; a target that is [N, 1] or carries colour channels is named by
its shape. One target value per sample against C outputs is answered only where the paste tells
why: a regression loss's own wording (the output is C wide where it should give one value), or
C = 2 (a binary label, which either fix serves); under BCE with C > 2, class indices meant for
CrossEntropyLoss and a model built C wide for one score per item look alike, so it is not answered.
"""

from __future__ import annotations

import re

from torchwise.explain.evidence_gate import reshaped_batch
from torchwise.explain.evidence_readings import item_counts, leading_count
from torchwise.explain.explanation import Explanation, KnownError, answer, dims, known, shape, told_apart
from torchwise.explain.families.code_errors import NO_HARD_CODED_BATCH
from torchwise.explain.paste_readings import flattened_counts, mask_values_answer
from torchwise.explain.stated_facts import (
    flattened_per_position,
    library_dispatch,
    library_dispatch_reading,
    one_target,
)


def _counted_or_flattened(match: re.Match[str], text: str) -> bool:
    """The message's counts, or (the count-less wording) the user's line that flattens both sides."""
    return match.group(1) is not None or flattened_per_position(text, match.start()) is not None


def _batch_sizes(match: re.Match[str], text: str) -> Explanation:
    if match.group(1) is None:  # no counts: only the user's line can say which sides were flattened
        flattened = flattened_per_position(text, match.start())
        assert flattened is not None, "the guard answers only where that line is shown"
        return flattened
    rows, targets = int(match.group(1)), int(match.group(2))
    meaning = "The loss pairs each output row with one target; the counts must be equal."
    if targets == 0:
        return answer(
            title=f"The target is empty (output {rows} rows, target 0)",
            meaning=meaning,
            cause=(
                "No labels reached the loss for this batch: the dataset or collator returned an"
                " empty target (a labels field that was never filled, a mask or filter that kept"
                " nothing, a slice past the end of the labels)."
            ),
            fix=(
                "Print the target's shape for the failing batch and follow it back to where the"
                " labels are built; check that every sample has its label before training."
            ),
        )
    if rows == 1 and targets > 1:
        return answer(
            title=f"The target has lost its batch dimension (output 1 row, target {targets})",
            meaning=meaning,
            cause=(
                f"With a batch of one sample the target's first dimension is not the batch: a"
                f" mask or sequence of length {targets} arrived as [{targets}, ...] instead of"
                " [1, ...] (a .squeeze() without a dim, or a dataset returning [H, W])."
            ),
            fix=(
                "Keep the batch dimension: targets are [N] for classes and [N, H, W] for"
                " segmentation masks; add it back with target.unsqueeze(0), and squeeze only"
                " a named dim (x.squeeze(1))."
            ),
        )
    if dispatcher := library_dispatch(text, match.start()):  # after round 9: a library assembled the loss's arguments
        cause, fix = library_dispatch_reading(dispatcher, rows, targets)
        return answer(title=f"The output has {rows} rows but the target has {targets}", meaning=meaning,
                      cause=cause, fix=fix)
    if targets == 1 and rows > 1:  # after round 9: a divisor of 1 is no evidence of a fold; a batch of one
        return one_target(rows)
    if targets > rows and targets % rows == 0:
        per_row = targets // rows
        return answer(
            title=f"The target has {per_row} values per output row ({targets} = {rows} x {per_row})",
            meaning=meaning,
            cause=(
                f"{targets} = {rows} x {per_row}: each target row holds {per_row} values."
                f" Most often the targets are one-hot rows ([{rows}, {per_row}], {per_row}"
                " classes) flattened by .view(-1), while CrossEntropyLoss wants one class index"
                " per sample. Or each sample has a target per token/pixel while the output is"
                " one row per sample."
            ),
            fix=(
                "Pass class indices, not one-hot rows: y = y.argmax(1) (shape [N], dtype long)."
                " For per-token targets flatten both sides alike:"
                " loss(logits.view(-1, num_classes), y.view(-1))."
            ),
        )
    if rows > targets and rows % targets == 0:
        per_target = rows // targets
        return answer(
            title=f"The output has {per_target} rows per target ({rows} = {per_target} x {targets})",
            meaning=meaning,
            cause=(
                f"{rows} = {per_target} x {targets}: the model returns {per_target} rows per"
                f" sample. A view with a fixed feature count (x.view(-1, 512)) folded the"
                f" positions left after the last pooling into the batch ({per_target} of them:"
                " the images are larger than the ones the model was built for); or several"
                " inputs were concatenated along the batch (dim=0) instead of the features; or"
                f" the last batch of the epoch has {targets} samples and the model reshapes with"
                " a hard-coded batch size."
            ),
            fix=(
                "Flatten per sample: x = x.view(x.size(0), -1) (or torch.flatten(x, 1)), with"
                " adaptive pooling (nn.AdaptiveAvgPool2d(1)) before it for any image size;"
                " concatenate several inputs' features with torch.cat(..., dim=1)."
                f" {NO_HARD_CODED_BATCH}"
            ),
        )
    if min(rows, targets) > 4096:  # round 8: counts of positions (pixels, tokens), not of samples
        return answer(
            title=f"The output covers {rows} positions but the target {targets}",
            meaning=f"{meaning} Counts this large are positions flattened over pixels or tokens (N x H x W, N x T).",
            cause=(
                "The output and the target cover different spatial sizes or sequence lengths: a network whose"
                " output map is cropped or padded against the labels (FCN-style), images or labels of another"
                " size (at evaluation), or inputs and labels padded to different lengths."
            ),
            fix=(
                "Make the sizes agree before the loss: resize the output to the labels (F.interpolate(out,"
                " size=target.shape[-2:], mode='bilinear')) or the images and labels to the size used in"
                " training; pad or truncate inputs and labels alike. Print both shapes before the loss."
            ),
        )
    flattened = flattened_counts(rows, targets, text, match.start())  # no hard-coded size on that line
    if flattened is not None:
        return flattened
    if not reshaped_batch(rows, targets):  # round 9: no view of the batch turns one count into the other
        return item_counts(rows, targets)
    return answer(
        title=f"The output has {rows} rows but the target has {targets}",
        meaning=meaning,
        cause=(
            "A view/reshape with a hard-coded size merged or split the batch, or the output is"
            " [N, C, ...] while the target was flattened (or the other way round)."
        ),
        fix=(
            "Reshape with the batch size taken from the tensor: x.view(x.size(0), -1)."
            f" {NO_HARD_CODED_BATCH} Print output.shape and target.shape just before the loss."
        ),
    )


def _multi_target(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="CrossEntropyLoss got a target with more than one value per sample",
        meaning=(
            "With an output of shape [N, C] the target must be [N] class indices (or [N, C]"
            " class probabilities of float dtype); this target has extra dimensions."
        ),
        cause=(
            "Labels shaped [N, 1] (read from a column), one-hot rows [N, C] of integer dtype,"
            " several labels per sample (multi-label), or per-pixel masks [N, H, W] given to a"
            " model that outputs one row per image."
        ),
        fix=(
            "[N, 1] labels: y = y.squeeze(1). One-hot rows: y = y.argmax(1). Several labels per"
            " sample that can all be true: nn.BCEWithLogitsLoss with float targets [N, C]."
            " Segmentation: the model must output [N, C, H, W] for [N, H, W] masks."
        ),
    )


def _segmentation_target(match: re.Match[str], text: str) -> Explanation:
    sizes = dims(match.group(1)) if match.group(1) else []
    rank = len(sizes) or int(match.group(2) or 0)
    seen = f" {shape(sizes)}" if sizes else f" with {rank} dimensions"
    if rank >= 4 and sizes and sizes[-1] in (3, 4) and sizes[1] != 1:
        cause = (
            f"The masks are colour images{seen}: {sizes[-1]} channels (RGB/RGBA) per pixel"
            " instead of one class index."
        )
        fix = (
            "Turn each colour into its class index when loading (a dict from (r, g, b) to the"
            " class id, or save the labels as single-channel PNGs), giving [N, H, W] of dtype"
            " long."
        )
    elif rank >= 4:
        cause = (
            f"The masks carry a channel dimension{seen}: [N, 1, H, W] (or colour channels)"
            " where [N, H, W] class indices are expected."
        )
        fix = (
            "Drop the channel: target = target.squeeze(1) (and .long()), giving [N, H, W];"
            " colour masks [N, H, W, 3] need each colour mapped to its class index."
        )
    else:
        cause = (
            f"The target{seen} is one class per image (or a flat vector), but the model's"
            " output is a spatial map [N, C, H, W], so the loss runs per pixel."
        )
        fix = (
            "For classification pool and flatten the model's output to [N, C]"
            " (nn.AdaptiveAvgPool2d(1) then torch.flatten(x, 1)); for segmentation give"
            " [N, H, W] masks."
        )
    return answer(
        title=f"The segmentation target has the wrong shape{seen}",
        meaning=(
            "For an output of shape [N, C, H, W] the loss wants a target [N, H, W] holding one"
            " class index per pixel."
        ),
        cause=cause,
        fix=fix,
    )


def _target_out_of_bounds(match: re.Match[str], text: str) -> Explanation:
    target = int(match.group(1))
    if target < 0:
        cause = (
            f"A label is {target}: an 'ignore' or missing-label value (-1) or labels shifted by"
            " one (label - 1 on 0-based labels) reached the loss."
        )
        fix = (
            "Pass that value as ignore_index (nn.CrossEntropyLoss(ignore_index=-1)), or fix the"
            " shift so labels run 0 .. num_classes - 1."
        )
    elif (mask_values := mask_values_answer(target, text)) is not None:
        return mask_values
    else:
        cause = (
            f"The model outputs fewer than {target + 1} classes, so label {target} has no"
            " column: num_classes (the last layer's out_features) is smaller than the largest"
            " label, or the labels are 1-based (1..C instead of 0..C-1), or a mask value such"
            " as 255 marks 'ignore'."
        )
        fix = (
            "Print y.min(), y.max() and the output's shape[1]: build the last layer with"
            " out_features = number of classes (max label + 1); map 1-based labels with y - 1;"
            " pass a void value as ignore_index (nn.CrossEntropyLoss(ignore_index=255))."
        )
    return answer(
        title=f"Label {target} is out of range for the model's classes",
        meaning=(
            "CrossEntropyLoss/NLLLoss take class indices in 0 .. C-1, where C is the size of the"
            f" output's class dimension; the target holds {target}."
        ),
        cause=cause,
        fix=fix,
    )


# What follows "Using a target size (...) that is different to the input size (...)" in the
# regression losses (mse_loss, l1_loss, smooth_l1_loss, huber_loss): BCELoss says "is deprecated"
REGRESSION_WARNING = re.compile(r"\s*\.?\s*This will likely lead to incorrect results due to broadcasting")


def _target_size(match: re.Match[str], text: str) -> Explanation | None:
    # two wordings (BCEWithLogits; BCELoss/MSELoss): take the pair of groups that matched
    target, output = (dims(group) for group in match.groups() if group is not None)
    width = output[1] if len(output) == 2 and len(target) == 1 and output[0] == target[0] else 0
    regression = REGRESSION_WARNING.match(text, match.end()) is not None
    if width > 1 and regression:
        # a regression loss wants one value per target value: the output's width is the model's
        cause = (
            f"The model gives {width} values per sample ({shape(output)}) where the target has one"
            f" ({shape(target)}): this loss (MSE/L1) compares one predicted value with each target"
            f" value, so the model's last layer is {width} wide where it should give 1 (an output"
            " size left from another task or loss, or a config's output dimension)."
        )
        fix = (
            "Build the model's last layer with 1 output (nn.Linear(..., 1), the output-size option"
            " of its config) and compare loss(out.squeeze(1), y); if the target should have"
            f" {width} values per sample (one-hot labels: F.one_hot(y, {width}).float()), give it"
            " that shape."
        )
    elif width > 2:
        # [N, C] against [N] under BCE: class indices for CrossEntropyLoss, or one score or label
        # per item from a model built C wide (a ranking or binary loss): the message alone cannot
        # tell which of the two is off
        return None
    elif width == 2:
        # two logits against one 0/1 label per sample: a binary task, which either fix serves
        cause = (
            f"The output {shape(output)} and the target {shape(target)} differ by the output's two"
            " values per sample: one label per sample (0 or 1) against a two-logit head, and"
            " BCE-style losses compare element by element."
        )
        fix = (
            "Either keep the two logits and use CrossEntropyLoss, not BCELoss, with the labels as"
            " class indices (long), or give the model one output (nn.Linear(..., 1)) and compare"
            " loss(out.squeeze(1), y.float())."
        )
    elif output == target + [1] or target == output + [1]:
        cause = (
            f"The output is {shape(output)} and the target {shape(target)}: one has the extra"
            " size-1 column of a single-logit head ([N, 1]) that the other lacks."
        )
        fix = (
            "Give both the same shape: loss(out.squeeze(1), y) or loss(out, y.unsqueeze(1))"
            " (or out.view_as(y)), with y as float."
        )
    elif (counted := leading_count(output, target)) is not None:  # round 10: only the item count differs
        cause, fix = counted
    elif len(output) == len(target) and output[0] == target[0]:
        axis = next(i for i, (a, b) in enumerate(zip(output, target, strict=True)) if a != b)
        cause = (
            f"Dimension {axis} differs: the model gives {output[axis]} channels/classes, the"
            f" target has {target[axis]}. Typical: masks read as RGB (3 channels) for a"
            " 1-channel output, or the model built for another number of classes than the"
            " dataset's (one-hot targets with the dataset's count)."
        )
        fix = (
            f"Make the counts agree: build the model's output with {target[axis]} classes if"
            " the targets are right; read masks as one channel (Image.open(p).convert('L'))"
            " when the output has 1."
        )
    else:
        cause = (
            f"The output {shape(output)} and the target {shape(target)} are shaped differently:"
            " BCE/MSE-style losses compare element by element and want identical shapes."
        )
        fix = (
            "Shape the target like the output (or the output like the target); for class"
            " indices with a [N, C] output use CrossEntropyLoss, not BCELoss."
        )
    return answer(
        title=f"Target {shape(target)} and output {shape(output)} differ in shape",
        meaning=(
            "Element-wise losses (BCEWithLogitsLoss, BCELoss, MSELoss) need the target shaped"
            " exactly like the output; broadcasting between them is refused."
        ),
        cause=cause,
        fix=fix,
    )


def _bce_autocast(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="BCELoss / binary_cross_entropy cannot run under autocast",
        meaning=(
            "Under mixed precision the sigmoid's outputs are float16, where a probability near 0"
            " or 1 rounds to exactly 0 or 1 and log(p) becomes -inf; torch refuses rather than"
            " return wrong losses."
        ),
        cause=(
            "The model ends in a sigmoid (nn.Sigmoid or torch.sigmoid) and the loss is nn.BCELoss"
            " or F.binary_cross_entropy, inside torch.autocast (AMP, precision=16, fp16)."
        ),
        fix=(
            "Remove the final sigmoid from the model and use nn.BCEWithLogitsLoss() /"
            " F.binary_cross_entropy_with_logits on the logits, which is autocast-safe and more"
            " accurate (apply torch.sigmoid only for predictions). If the probabilities must stay,"
            " compute that loss in float32 outside autocast:\n"
            "    with torch.autocast(device_type=\"cuda\", enabled=False):\n"
            "        loss = F.binary_cross_entropy(p.float(), target.float())"
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "batch-size-mismatch",
        # after round 9: a title line may retell the message without its counts
        r"[Ee]xpected input batch_size \((\d+)\) to match target batch_size \((\d+)\)"
        r"|[Ee]xpected input batch_size to match target batch_size\b",
        _batch_sizes,
        when=_counted_or_flattened,
    ),
    known(
        "multi-target",
        r"0D or 1D target tensor expected, multi-target not supported|multi-target not supported",
        _multi_target,
    ),
    known(
        "segmentation-target",
        r"only batches of spatial targets supported \((?:non-empty )?3D tensors\) but got targets"
        r" of (?:size: ?: ?(\[[\d, ]+\])|dimension: (\d+))",
        _segmentation_target,
    ),
    known("target-out-of-bounds", r"Target (-?\d+) is out of bounds", _target_out_of_bounds),
    told_apart(
        "target-size",
        r"Target size \(torch\.Size\((\[[\d, ]*\])\)\) must be the same as input size"
        r" \(torch\.Size\((\[[\d, ]*\])\)\)"
        r"|Using a target size \(torch\.Size\((\[[\d, ]*\])\)\) that is different to the"
        r" input size \(torch\.Size\((\[[\d, ]*\])\)\)",
        _target_size,
    ),
    known(
        "bce-unsafe-autocast",
        r"binary_cross_entropy and torch\.nn\.BCELoss are unsafe to autocast",
        _bce_autocast,
    ),
]
