"""A string where the code expects a tensor: ``'str' object has no attribute 'backward'`` (or ``'size'``,
``'dim'``, ``'item'``, ``'to'``).

A tensor method called on a ``str`` means a name that should hold a tensor holds a string, and in
training code the usual way a string gets there is a dict read as a sequence: unpacking a dict
(``loss, logits = outputs``) or iterating one (``for x in batch``) gives its keys. The classic case
is a model of transformers 4 or later, whose forward returns a ModelOutput (a dict) by default,
unpacked by code written for transformers 3, which returned a tuple: ``_, pooled = self.bert(...)``
makes ``pooled`` the string ``'pooler_output'``. The paste tells the transformers case apart (it
names the library, or a frame unpacks a model's call); without either, the dict reading is given
in general terms. Attributes that are not tensor methods (``'str' object has no attribute
'decode'``) are another story (bytes and str) and are left alone.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import Frame, frames

TENSOR_ATTRIBUTES = (
    "backward|item|size|dim|shape|detach|cpu|cuda|to|view|reshape|argmax|softmax|mean|sum|float|long|half"
    "|numpy|requires_grad|device|dtype|unsqueeze|squeeze|max|contiguous|masked_fill|permute|transpose"
)
STR_ATTRIBUTE = rf"AttributeError: 'str' object has no attribute '({TENSOR_ATTRIBUTES})'"
HUGGING_FACE = re.compile(r"\btransformers\b|\bbert\b|from_pretrained|huggingface|ModelOutput|return_dict", re.I)
# A line that unpacks a call's result into two or more names: _, pooled = self.bert(ids, mask)
UNPACKED_CALL = re.compile(r"^\s*(?:[\w*]+\s*,\s*)+[\w*]+\s*=\s*[\w.\[\]]+\(")


def _unpacking(text: str, before: int) -> Frame | None:
    return next((frame for _, frame in reversed(frames(text[:before])) if UNPACKED_CALL.match(frame.source)), None)


def _string_for_tensor(match: re.Match[str], text: str) -> Explanation | None:
    method = match.group(1)
    unpacked = _unpacking(text, match.start())
    where = f" ({unpacked.place}: {unpacked.source})" if unpacked else ""
    meaning = f"The code calls .{method} on a value that is a Python string, where it expects a tensor."
    if HUGGING_FACE.search(text) or unpacked and re.search(r"bert|model|encoder", unpacked.source, re.I):
        return answer(
            title=f"A model's output dict was unpacked as a tuple: .{method} on a key's name{where}",
            meaning=meaning,
            cause=(
                "A transformers model of release 4 or later returns a ModelOutput, a dict, by default"
                " (return_dict=True); code written for transformers 3, which returned a tuple, unpacks it"
                f" (loss, logits = model(...)){where} and so gets the dict's keys, strings such as 'loss' or"
                " 'pooler_output', instead of the tensors."
            ),
            fix=(
                "Read the fields by name: out = model(...); loss, logits = out.loss, out.logits (or out[0]); or"
                " load the model with from_pretrained(..., return_dict=False) to get the tuple the code expects;"
                " or install the transformers release the code was written for (its requirements)."
            ),
        )
    return answer(
        title=f"A string where a tensor was expected: .{method} on a str{where}",
        meaning=meaning,
        cause=(
            "A dict was read as a sequence: unpacking a dict (a, b = d) or iterating one (for x in batch) gives"
            f" its keys, which are strings{where}; the value was a dict-like output or batch (a model output"
            " object, a dataset sample as a dict)."
        ),
        fix=(
            "Read the values by key (d['loss'], out.logits) or iterate d.items() / d.values(); print(type(v))"
            " where the value is made to see the dict."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart("string-for-tensor", STR_ATTRIBUTE, _string_for_tensor, generic=True),
]
