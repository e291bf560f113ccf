"""Readings that the rest of a paste tells apart from a message's usual one (issue 21, after
round 8's measurement): the line that raised, a class count the user states, the words around a
traceback. Each function returns None where the paste does not tell, and the usual reading stands.
"""

from __future__ import annotations

import math
import re

from torchwise.explain.explanation import Explanation, answer
from torchwise.explain.paste import Frame, last_frame, user_frame

# A matrix product written out on a line: torch.mm / torch.matmul / torch.addmm, x.mm(...),
# x.matmul(...), or the @ operator between two operands (not a decorator: something precedes it).
MATRIX_PRODUCT = re.compile(r"\btorch\.(?:mm|matmul|addmm)\(|\.(?:mm|matmul)\(|[\w)\]]\s*@\s*[\w(]")


def own_matrix_product(text: str, before: int) -> Frame | None:
    """The frame that raised, when it is the user's own line multiplying their own tensors: then
    there is no nn.Linear between them (an nn.Linear or F.linear call raises in torch's frames)."""
    frame = last_frame(text, before)
    if frame is None or frame.in_library or "linear(" in frame.source.lower():
        return None
    return frame if MATRIX_PRODUCT.search(frame.source) else None


def matrix_product_answer(frame: Frame, rows: int, inner: int, expected: int, columns: int) -> Explanation:
    return answer(
        title=f"A matrix product's inner sizes disagree: {inner} against {expected}",
        meaning=(
            f"A {rows}x{inner} matrix is multiplied by a {expected}x{columns} one; the first's columns"
            f" ({inner}) must equal the second's rows ({expected})."
        ),
        cause=(
            f"The product is written out on your own line, {frame.place} ({frame.source}), so no nn.Linear is"
            f" involved: its two operands were built for different sizes, one with {inner} where the other"
            f" was made for {expected} (a parameter created from one setting or dataset, a vector or encoding"
            " built from another)."
        ),
        fix=(
            "Print both operands' shapes just before that line and follow the one with the wrong size back to"
            " where it is built (its size from a config value, a number of tasks or classes, the data); make"
            " the inner sizes agree there. Transpose only where the maths says so."
        ),
    )


# A class count the user states: "n_classes = 2", "num_classes: 3", "nb_classes=10".
CLASS_COUNT = re.compile(r"\b(?:n|num|nb)_?classes\s*(?:=|:)\s*(\d+)\b", re.IGNORECASE)


def mask_values_answer(target: int, text: str) -> Explanation | None:
    """``Target 192 is out of bounds`` where the paste says there are 2 classes: a label at least
    twice the class count is no head one class too narrow but a value nobody mapped to a class,
    most often a mask's pixel value (0-255) loaded as it is."""
    counts = [int(count) for count in CLASS_COUNT.findall(text)]
    classes = max(counts, default=0)
    if not classes or target < 2 * classes:
        return None
    return answer(
        title=f"Label {target} is a value never mapped to one of the {classes} classes (a mask's pixel value?)",
        meaning=(
            f"CrossEntropyLoss/NLLLoss take class indices in 0 .. C-1; the paste sets {classes} classes and"
            f" the target holds {target}, far past them."
        ),
        cause=(
            "A label that far beyond the class count is not a last layer one class too narrow: the targets"
            " hold values that were never mapped to class indices. Most often they are a mask's pixel values"
            " (0-255: 0/255 for a binary mask, grey levels such as 128 or 192 from a palette or an"
            " antialiased resize) loaded as they are."
        ),
        fix=(
            f"Print torch.unique(y) for a batch; map each stored value to its class 0 .. {classes - 1} when"
            f" loading (y = (mask > 127).long() for a 0/255 binary mask, a lookup table for grey levels or"
            f" colours, and nearest-neighbour resizing of masks); keep the model's {classes} outputs. A value"
            f" that marks pixels to skip (255) goes to ignore_index instead."
        ),
    )


# The user's words that gradient checkpointing is on, where the traceback does not show it.
CHECKPOINTING = re.compile(
    r"gradient[_ ]checkpointing|activation[_ ]checkpointing|use_reentrant|torch\.utils\.checkpoint"
    r"|checkpoint_sequential",
    re.IGNORECASE,
)


def checkpointed_backward(text: str) -> Explanation | None:
    """``Trying to backward through the graph a second time`` under activation checkpointing:
    the traceback runs through torch.utils.checkpoint, or the paste says checkpointing is on."""
    if re.search(r"torch[\\/]utils[\\/]checkpoint\.py", text):
        meaning = "The traceback runs through torch.utils.checkpoint's backward, which recomputes the segment."
    elif CHECKPOINTING.search(text):
        meaning = (
            "The paste says gradient checkpointing is on: its backward recomputes each checkpointed segment's forward."
        )
    else:
        return None
    return answer(
        title="A second backward ran through a checkpointed segment",
        meaning=meaning,
        cause=(
            "Reentrant activation checkpointing (use_reentrant=True, the old default) backpropagates its"
            " segment once: a second backward through the same forward (two losses, retain_graph=True)"
            " finds the recomputed graph freed. A segment that, recomputed, reads a tensor from outside"
            " it (another trainable model's features, passed in or kept by hooks) backpropagates through"
            " that tensor's graph a second time too."
        ),
        fix=(
            "Backpropagate once ((loss_a + loss_b).backward()), or checkpoint with"
            " torch.utils.checkpoint.checkpoint(fn, x, use_reentrant=False), which supports retain_graph;"
            " or turn checkpointing off for that part."
        ),
    )


# A flatten on the user's line that takes its sizes from the tensors: view(-1, ...), reshape(-1),
# .flatten(); a literal size among its arguments (view(-1, 512), view(64, -1)) is hard-coded.
FLATTEN = re.compile(r"\.(?:view|reshape)\(\s*-1\s*[,)]|\.flatten\(|torch\.flatten\(")
TAKEN_SIZE = re.compile(r"\.size\(\s*-?\d+\s*\)|\.shape\[\s*-?\d+\s*\]")
LITERAL_SIZE = re.compile(r"\.(?:view|reshape)\([^)]*?(?<![\w.-])\d+\s*[,)]")


def flattened_counts(rows: int, targets: int, text: str, before: int) -> Explanation | None:
    """``Expected input batch_size (1216) to match target batch_size (1280)`` where the user's
    line flattens both sides with sizes taken from the tensors: each count is a product of the
    tensors' sizes, so no hard-coded view is to blame; a common factor (64 x 19 against 64 x 20)
    says which dimension differs."""
    frame = user_frame(text, before)
    if frame is None or not FLATTEN.search(frame.source):
        return None
    if LITERAL_SIZE.search(TAKEN_SIZE.sub("", frame.source)):
        return None
    common = math.gcd(rows, targets)
    first, second = rows // common, targets // common
    where = f"{frame.place} ({frame.source})"
    if common > 1 and min(first, second) > 1:
        return answer(
            title=f"Output and target were flattened from different lengths ({rows} = {common} x {first},"
            f" {targets} = {common} x {second})",
            meaning="The loss pairs each output row with one target; the counts must be equal.",
            cause=(
                f"Your line {where} flattens both sides with sizes taken from the tensors, so no size is"
                f" hard-coded there: the two tensors differ in one dimension. {rows} = {common} x {first}"
                f" and {targets} = {common} x {second}: most often a sequence {first} steps long in the"
                f" output against {second} in the target for {common} sequences (a decoder fed the target"
                f" without its first or last token, but scored against the whole target), or the same"
                f" lengths for {first} against {second} samples."
            ),
            fix=(
                "Print output.shape and target.shape before the flatten and make the differing dimension"
                " agree: score the decoder against the target shifted the way it was fed (target[:, 1:]"
                " when the start token is not predicted), or trim or pad one side."
            ),
        )
    return answer(
        title=f"The output has {rows} rows but the target has {targets}",
        meaning="The loss pairs each output row with one target; the counts must be equal.",
        cause=(
            f"Your line {where} flattens both sides with sizes taken from the tensors, so each count is the"
            " batch times the other dimensions: the output and the target differ in one of them (a sequence"
            " length, a spatial size, the number of samples)."
        ),
        fix="Print output.shape and target.shape before the flatten and make the differing dimension agree.",
    )
