"""Known errors of torch.compile's tracer (dynamo) that name a Python habit it cannot trace."""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _data_dependent(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="torch.compile met a tensor's value read in Python (data-dependent code)",
        meaning=(
            "While tracing, tensors are symbolic; _local_scalar_dense is the op behind .item(),"
            " int(t), float(t) or a Python if on a tensor, which needs a real value."
        ),
        cause=(
            "The compiled function reads a tensor's value in Python: .item(), .tolist(), int(x),"
            " if x.sum() > 0:, a loop bounded by a tensor, or a shape computed from data, in the"
            " model or a custom layer (often an RNN/LSTM loop written in Python)."
        ),
        fix=(
            "Keep the computation in tensors (torch.where instead of if, masks instead of"
            " variable-length loops), move the value-reading part outside the compiled function"
            " (or mark it with torch.compiler.disable), or set"
            " torch._dynamo.config.capture_scalar_outputs = True on a newer torch."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "compile-data-dependent",
        r"trying to get value out of a tracing tensor with aten\._local_scalar_dense",
        _data_dependent,
    ),
]
