"""Known errors where two tensors meet in an elementwise operation with sizes that do not
broadcast, and what the two sizes say: 4 against 3 is an RGBA image, sizes one apart are an odd
image size through a U-Net or a sequence counted two ways, a size of one per GPU is a scalar that
nn.DataParallel gathered, a power-of-two context one short is a prompt longer than the model.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart

ATTENTION = re.compile(r"mask|attn|attention|past_key|position_ids|causal", re.IGNORECASE)


def _size_mismatch(match: re.Match[str], text: str) -> Explanation | None:
    a, b, dim = (int(group) for group in match.groups())
    title = f"Sizes {a} and {b} meet in dimension {dim} of an elementwise operation"
    meaning = (
        f"Two tensors combined elementwise (+, -, *, /, Normalize) must have equal sizes in"
        f" each dimension, or size 1 there to broadcast; dimension {dim} has {a} and {b}."
    )
    if {a, b} == {3, 4}:
        return answer(
            title=f"An RGBA image (4 channels) meets 3-channel RGB values ({a} vs {b})",
            meaning=meaning,
            cause=(
                "The image has an alpha channel (RGBA, typical for PNG files), so ToTensor()"
                " gives 4 channels while Normalize's mean/std (or the model) has 3."
            ),
            fix=(
                'Convert every image when loading: Image.open(path).convert("RGB") in the'
                " dataset (it also fixes grayscale and palette images); for an array already"
                " loaded keep the colour channels: img[:, :, :3]."
            ),
        )
    if "all input tensors were scalars" in text and min(a, b) <= 16:
        cause = (
            f"nn.DataParallel gathered a scalar that forward returns (a temperature, a logit scale,"
            f" a loss) from each GPU into a vector of {min(a, b)} values (the warning 'Was asked to"
            " gather along dimension 0, but all input tensors were scalars' in the paste), which"
            " then meets the features elementwise."
        )
        fix = (
            "Reduce it after the wrapper (logit_scale = logit_scale.mean(), or take [0]), or"
            " keep such scalars out of forward's outputs (read model.module.logit_scale); or"
            " train with DistributedDataParallel, which gathers nothing."
        )
    elif abs(a - b) == 1 and min(a, b) >= 512 and min(a, b) & (min(a, b) - 1) == 0 and ATTENTION.search(text):
        cause = (
            f"The sequence is {max(a, b)} tokens and the model's context is {min(a, b)}: its"
            f" causal mask or position table holds {min(a, b)} positions, and the prompt plus"
            " the generated tokens ran one past it."
        )
        fix = (
            f"Keep prompt + max_new_tokens within {min(a, b)} tokens: truncate the input"
            f" (tokenizer(..., truncation=True, max_length={min(a, b)} - max_new_tokens)), pass"
            " fewer retrieved passages, or use a model with a longer context."
        )
    elif {a, b} == {1, 3}:
        cause = "A grayscale image (1 channel) meets 3-channel values (Normalize mean/std or RGB data)."
        fix = 'Convert images when loading: Image.open(path).convert("RGB"), or give Normalize one mean/std.'
    elif abs(a - b) == 1 and ATTENTION.search(text):
        cause = (
            "A sequence length one apart in attention: a mask, position ids or key/value cache"
            " built for one token more or fewer than the sequence, typically model code written"
            " for another transformers version than the installed one (they disagree on counting"
            " a cached or special token)."
        )
        fix = (
            "Install the transformers version the project pins (its requirements file); print the"
            " shapes of the input ids and the mask just before the call, and build the mask from"
            " the input's own length."
        )
    elif abs(a - b) == 1:
        cause = (
            "Two paths computed this length differently by one: in a CNN, an odd image size"
            " through pooling and upsampling (or strided convs), where one path rounds down and"
            " the other does not; in a sequence model, one tensor counting a token (a start"
            " token, a cache entry) that the other does not."
        )
        fix = (
            "Print both shapes before the failing line. For images use sizes that are a multiple"
            " of 2**(number of downsamplings), or resize one tensor to the other before combining"
            " (F.interpolate(x, size=y.shape[-2:])); for sequences build both from one length."
        )
    else:
        # a loss's output against its target, two sequence lengths, a channels-last layout: the
        # two sizes alone do not say which
        return None
    return answer(title=title, meaning=meaning, cause=cause, fix=fix)


KNOWN: list[KnownError] = [
    told_apart(
        "size-mismatch",
        r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at"
        r" non-singleton dimension (\d+)",
        _size_mismatch,
    ),
]
