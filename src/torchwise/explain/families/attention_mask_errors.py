"""Known errors of an attention mask whose dtype scaled_dot_product_attention refuses.

``F.scaled_dot_product_attention`` (and ``nn.MultiheadAttention``, which calls it since torch 2.0)
takes a bool mask, or an additive float mask of the query's own dtype: "Expected attn_mask dtype to
be bool or float or to match query dtype, but got attn_mask.dtype: long int and query.dtype: float"
names both. An integer mask is a tokenizer's 0/1 attention_mask passed as is; a float mask of
another float dtype is a mask built in float32 while the model runs in half precision.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _mask_dtype(match: re.Match[str], text: str) -> Explanation:
    mask, query = match.group(1).strip(), match.group(2).strip()
    integer = re.search(r"long|int|uint8|byte", mask, re.IGNORECASE)
    if integer:
        cause = (
            f"The mask is an integer tensor ({mask}): a tokenizer's 0/1 attention_mask (or a padding mask"
            " built from token ids) passed where attention takes a bool mask or an additive float one."
        )
        fix = (
            "Convert it: mask.bool() for keep/drop (True = attend), or an additive mask of the query's dtype"
            " ((1 - mask[:, None, None, :].to(q.dtype)) * torch.finfo(q.dtype).min); or pass it to the"
            " model as attention_mask and let the model build its own."
        )
    else:
        cause = (
            f"The mask is a float tensor of another precision ({mask}) than the query ({query}): built in"
            " float32 (torch.zeros/ones without dtype) while the model runs in half precision or under"
            " autocast, or the reverse."
        )
        fix = (
            "Build or cast the mask in the query's dtype (mask = mask.to(q.dtype), or dtype=q.dtype where it"
            " is created), or use a bool mask; in a library, a release where this was fixed."
        )
    return answer(
        title=f"The attention mask is {mask} and the query {query}: scaled_dot_product_attention refuses it",
        meaning=(
            "scaled_dot_product_attention takes a bool mask, or an additive float mask of the query's own"
            " dtype; this mask is neither."
        ),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "attention-mask-dtype",
        r"Expected attn_mask dtype to be bool or (?:float or )?to match query dtype, but got attn_mask\.dtype:"
        r"\s*([^\n]+?)\s+and\s+query\.dtype:\s*([^\n]+?)\s+instead",
        _mask_dtype,
    ),
]
