"""The evidence gate (issue 21, round 9): a reading must fit what the paste shows.

Many of explain's readings assume a construct the message itself does not name: an nn.Linear
fed an unflattened input, a view that hard-codes the batch size, a GPU kernel that checks class
labels, a model built with other options. Round 9's working half showed that most wrong answers
were such a reading where the paste shows the construct is not there, through:

- the numbers the message prints: a reshape of the batch leaves the two counts sharing the
  batch's factor; flattening a sample multiplies its width; a weight of the same sizes in
  another order is a layout, not another size; a sample of size 0 is empty, not long;
- the traceback: the frame that raised is an explicit matrix product inside a library, not a
  layer the user sized; the layer that raised belongs to an installed library's model
  (``library_layer``); the stack runs in the user's own collate or in the DataLoader's
  (``own_stack``, ``in_collate``); the memory ran out while weights were loading
  (``loading_frame``); a kernel's own assertion line names another check than the one guessed.

The families ask these questions before their usual reading and give the reading the evidence
supports instead (``evidence_readings``). ``withheld`` is the gate
``lookup`` asks of every match: the reading of an entry listed in ``GATES`` is withheld where the
paste's traceback contradicts its construct, and "not known" (or another entry) answers. What it
cannot see: a construct the paste does not show either way (a cut traceback, a message without
frames) keeps the usual reading. Pure text work.

>>> reshaped_batch(1216, 1280), reshaped_batch(32, 17), reshaped_batch(511, 23)
(True, True, False)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from torchwise.explain.kernel_assertions import ASSERTIONS
from torchwise.explain.paste import Frame, frames

# A batch is rarely smaller than 8 samples; a reshape that merges or splits it leaves a factor of
# at least the batch (or the per-sample size) common to both counts.
BATCH_FACTOR = 8
# A conv stack's flattened width is channels x positions: two such widths share the channel count.
CHANNEL_FACTOR = 16


def reshaped_batch(rows: int, targets: int) -> bool:
    """Whether an output's and a target's counts can be one batch reshaped (a hard-coded view, a flatten
    of one side): they share a factor of at least ``BATCH_FACTOR``, or they are too small to tell, or the
    output's count is a batch size as configured (a power of two, a multiple of 10) above the target's,
    the last batch of an epoch under a view that hard-codes it. Counts that are none of these (511 and 23,
    882 and 768) are different numbers of items, which no view of the batch explains."""
    configured = rows & (rows - 1) == 0 or rows % 10 == 0
    return (
        math.gcd(rows, targets) >= BATCH_FACTOR
        or min(rows, targets) < BATCH_FACTOR
        or (configured and rows > targets)
    )


def flattened_width(features: int, expected: int) -> bool:
    """Whether a layer built for ``expected`` features that got ``features`` can be a flatten
    problem: one width a whole multiple of the other (an unflattened [N, C, L] gives L, flattened
    C x L), or both a flattened conv map sharing its channel count. 7 against 256 is neither: the
    tensor comes from a part built for another width."""
    low, high = sorted((features, expected))
    return high % low == 0 or math.gcd(features, expected) >= CHANNEL_FACTOR


def permuted(saved: list[int], current: list[int]) -> bool:
    """The same sizes in another order, or with a size-1 axis added or dropped: [3, 3, 3, 80, 80] against
    [80, 3, 3, 3, 80]; [768, 768] against [768, 768, 1] (a 1x1 convolution stored as a Linear)."""
    def sizes(shape: list[int]) -> list[int]:
        return sorted(size for size in shape if size != 1)

    return saved != current and bool(sizes(saved)) and sizes(saved) == sizes(current)


def empty_entry(first: list[int], second: list[int]) -> bool:
    """One of two shapes has a size 0 where the other has not: an empty sample, not a long one."""
    return (0 in first) != (0 in second)


# ---- the traceback gate ---------------------------------------------------------------------

TORCH_FILE = re.compile(r"(?:^|[\\/])torch[\\/]")
# An explicit matrix product on a line: torch.mm / matmul / bmm / einsum, x.mm(...), or ``a @ b``.
EXPLICIT_PRODUCT = re.compile(
    r"\btorch\.(?:mm|matmul|bmm|addmm|baddbmm|einsum)\(|\.(?:mm|matmul|bmm)\(|[\w)\]]\s*@\s*[\w(]"
)


def raising_frame(text: str, before: int) -> Frame | None:
    """The frame that raised: the last one printed before the error line at ``before``."""
    found = [frame for start, frame in frames(text) if start < before]
    return found[-1] if found else None


def layer_owner(text: str, before: int) -> Frame | None:
    """The frame whose code called the layer that raised: the last frame before the error line that is
    not torch's own (torch's module call and functional frames in between are skipped); None without frames."""
    found = [frame for start, frame in frames(text) if start < before]
    outside = [frame for frame in found if not TORCH_FILE.search(frame.file)]
    return outside[-1] if outside else None


def library_layer(text: str, before: int) -> Frame | None:
    """The owner of the layer that raised, when it is an installed library's code (transformers'
    attention, a diffusers block): the library sized that layer from its model's config, not the user."""
    owner = layer_owner(text, before)
    return owner if owner is not None and owner.in_library else None


# The DataLoader's collate: what it stacks are the samples of one batch, never lists to join.
COLLATE = re.compile(r"[\\/]utils[\\/]data[\\/]_utils[\\/](?:collate|fetch)\.py|default_collate")


def in_collate(text: str, before: int) -> bool:
    """The traceback runs through the DataLoader's collate before the error line."""
    return any(COLLATE.search(frame.file + " " + frame.function) for start, frame in frames(text) if start < before)


# A line that loads weights: the memory it asks for is the checkpoint's or the model's, not a batch's.
LOADING = re.compile(r"\btorch\.load\(|\.load_state_dict\(|\bfrom_pretrained\(")


def loading_frame(text: str, before: int) -> Frame | None:
    """The frame that was loading weights when the error came (torch.load, load_state_dict,
    from_pretrained on a frame's line, or torch's serialization code), else None."""
    found = [frame for start, frame in frames(text) if start < before]
    # the line that called the loader names it best; torch's serialization frame where that line is cut
    loading = [f for f in found if LOADING.search(f.source)] or [
        f for f in found if re.search(r"torch[\\/]serialization\.py", f.file)
    ]
    return loading[-1] if loading else None


def own_stack(text: str, before: int) -> Frame | None:
    """The frame that raised, when it is the user's own line calling torch.stack (a collate_fn of
    theirs): the samples it stacks are what that code gathered, not default_collate's transformed images."""
    frame = raising_frame(text, before)
    if frame is None or frame.in_library or not re.search(r"\bstack\(", frame.source):
        return None
    return frame


def _library_product(match: re.Match[str], text: str) -> str | None:
    """linear-shapes assumes an nn.Linear the user sized; a library's own line that multiplies two
    tensors (transformers' attention scores, a package's projection written as ``x @ w``) is no
    Linear of the user's, and the operands it got come from whatever the user handed the library."""
    frame = raising_frame(text, match.start())
    if frame is None or not frame.in_library or TORCH_FILE.search(frame.file):
        return None
    if EXPLICIT_PRODUCT.search(frame.source) and "linear(" not in frame.source.lower():
        return f"raised by an explicit matrix product in {frame.package or frame.file} ({frame.source})"
    return None


# The assertion a GPU kernel prints names its check: "Assertion `t >= 0 && t < n_classes` failed".
KERNEL_ASSERTION = re.compile(r"Assertion `([^`]+)` failed")


def _other_kernel(match: re.Match[str], text: str) -> str | None:
    """device-side-assert's bare reading guesses labels or token ids out of range; a paste whose
    kernel assertion names another check (one the family has no reading for) contradicts it."""
    checks = KERNEL_ASSERTION.findall(text)
    if not checks or any(re.search(pattern, text) for pattern, _, _ in ASSERTIONS):
        return None
    return f"the kernel's assertion is `{checks[-1]}`, no index or label check"


Gate = Callable[[re.Match[str], str], "str | None"]

# entry id -> the check that says the paste contradicts the construct its reading assumes
GATES: dict[str, Gate] = {
    "linear-shapes": _library_product,
    "device-side-assert": _other_kernel,
}


def withheld(error_id: str, match: re.Match[str], text: str) -> str | None:
    """Why the reading of ``error_id`` at ``match`` does not fit the paste, or None where it may."""
    gate = GATES.get(error_id)
    return gate(match, text) if gate else None
