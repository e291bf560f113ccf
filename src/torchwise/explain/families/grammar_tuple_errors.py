"""A tuple where the code expects a tensor: ``'tuple' object has no attribute 'size'`` (or ``'clone'``,
``'dim'``, ``'to'``...).

Some layers return several values: an LSTM, GRU or RNN returns ``(output, hidden)``, a MaxPool built
with ``return_indices=True`` returns ``(values, indices)``. Code that takes a layer's output as one
tensor then meets a tuple. Where that code is is what the traceback says:

* a frame of an installed package other than torch (torchsummary, torchstat, captum, a visualiser)
  raised it: that tool walks the layers with hooks and assumes each returns one tensor; the model is
  fine, the tool cannot measure a layer that returns a tuple;
* the user's own line raised it and the paste shows such a layer: the line uses the layer's result
  whole, where it should unpack it (``output, _ = self.lstm(x)``).

Without a layer that returns a tuple in the paste, nothing is said (a tuple can come from anywhere).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.families.grammar_str_errors import TENSOR_ATTRIBUTES
from torchwise.explain.paste import last_frame

TUPLE_ATTRIBUTE = rf"AttributeError: 'tuple' object has no attribute '({TENSOR_ATTRIBUTES}|clone|data)'"
TUPLE_LAYER = re.compile(r"\b(?:nn\.)?(LSTM|GRU|RNN)\b|\b(lstm|gru|rnn)\w*\s*\(|(return_indices\s*=\s*True)")


def _layer(text: str) -> str | None:
    found = TUPLE_LAYER.search(text)
    if found is None:
        return None
    if found.group(3):
        return "a MaxPool built with return_indices=True, which returns (values, indices)"
    kind = (found.group(1) or found.group(2)).upper()
    return f"{'a' if kind == 'GRU' else 'an'} {kind} layer, which returns (output, hidden)"


def _tuple_for_tensor(match: re.Match[str], text: str) -> Explanation | None:
    frame = last_frame(text, match.start())
    layer = _layer(text)
    if frame is None or layer is None:
        return None
    attribute = match.group(1)
    if frame.in_library and frame.package not in (None, "torch"):
        return answer(
            title=f"{frame.package} expects one tensor per layer, and {layer.split(',')[0]} returns a tuple",
            meaning=(
                f"{frame.package} ({frame.place}: {frame.source}) reads .{attribute} of a layer's output, and that"
                " output is a tuple."
            ),
            cause=(
                f"The model has {layer}; {frame.package} walks the layers with hooks and assumes each returns a"
                " single tensor. The model is not wrong: the tool cannot handle a layer whose output is a tuple."
            ),
            fix=(
                "Use a tool that handles tuple outputs (torchinfo's summary does LSTMs), or wrap the layer in a"
                " small module that returns only the tensor the next layer uses (output[0]) while inspecting it."
            ),
        )
    if frame.in_library:
        return None
    return answer(
        title=f"A layer's tuple used as a tensor: .{attribute} on {layer.split(',')[0]}'s result ({frame.place})",
        meaning=f"{frame.place} ({frame.source}) reads .{attribute} of a value that is a tuple.",
        cause=f"The value is the whole result of {layer}, used as if it were the output tensor.",
        fix="Unpack it where the layer is called: output, _ = self.lstm(x) (or output = self.lstm(x)[0]).",
    )


KNOWN: list[KnownError] = [
    told_apart("tuple-for-tensor", TUPLE_ATTRIBUTE, _tuple_for_tensor, generic=True),
]
