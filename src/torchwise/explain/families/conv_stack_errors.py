"""Known errors of a convolution given one dimension more than it takes: a stack per sample.

"Expected 4-dimensional input for 4-dimensional weight [96, 3, 4, 4], but got 5-dimensional input
of size [2, 16, 3, 448, 448]" (torch before 1.11; ``conv-weight-rank`` reads the missing-dimension
cases) with the weight's channel count in the third place says each sample is already a stack of
inputs ([16, 3, 448, 448]: video frames, multi-crop views, several images per item) and batching
added a fifth dimension the 2-D convolution cannot take.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, dims, shape, told_apart


def _stacked(match: re.Match[str], text: str) -> Explanation | None:
    wanted, weight, seen = int(match.group(1)), dims(match.group(2)), dims(match.group(4))
    others = re.findall(r"input (?:of size|to conv\w+, but got input of size):?\s*\[([\d, ]+)\]", text)
    if any(dims(other) != seen for other in others):
        return None  # the user tried other ranks: the layer's kind is in question, not told here
    if len(seen) != wanted + 1 or len(weight) < 2 or seen[2] != weight[1]:
        return None
    batch, per_item, item = seen[0], seen[1], seen[2:]
    return answer(
        title=f"A {wanted - 2}-D convolution got a stack of {per_item} inputs per sample: {shape(seen)}",
        meaning=(
            f"The layer (weight {shape(weight)}) takes [N, C, ...] batches of {wanted} dimensions; each of the"
            f" {batch} samples here is itself {per_item} inputs of {shape(item)}, so the batch has {len(seen)}."
        ),
        cause=(
            f"The dataset returns {per_item} images per item (video frames, multi-crop or several views), and"
            " the DataLoader stacks them into one more dimension than the model's first convolution takes."
        ),
        fix=(
            f"Fold the stack into the batch before the model: x = x.view(-1, {', '.join(map(str, item))})"
            f" (and reshape the outputs back to [{batch}, {per_item}, ...] if they are combined per item), or"
            " make the dataset return one image per item, or use a model built for clips (3-D convolutions)."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart(
        "conv-input-stacked",
        r"Expected (\d)-dimensional input for \1-dimensional weight:? ?\[?([\d, ]+)\]?,? but got"
        r" (\d)-dimensional input of size:? ?\[([\d, ]+)\]",
        _stacked,
    ),
]
