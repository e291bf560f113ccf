"""Known PyTorch error -> what it means, the likely cause, and the fix.

``explain`` takes an exception or any text holding the message (a whole traceback will do)
and returns an ``Explanation``, or None for a message it does not know. The table is
``KNOWN``: one entry per error, each a regex and a builder (``code_errors`` for mistakes in
the user's model and data code, ``runtime_errors`` for autograd, memory and kernel failures
during a step, ``setup_errors`` for the install and the machine). No torch import.

>>> e = explain("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x784 and 128x10)")
>>> e.title
'A Linear layer expects 128 input features but got 784'
>>> explain("ValueError: something else entirely") is None
True
"""

from __future__ import annotations

from torchwise.diagnose import code_errors, runtime_errors, setup_errors
from torchwise.diagnose.explanation import Explanation, KnownError

# First match wins; the messages are distinct enough that the order rarely matters.
KNOWN: list[KnownError] = [*code_errors.KNOWN, *runtime_errors.KNOWN, *setup_errors.KNOWN]


def error_text(error: BaseException | str) -> str:
    """The text to match: a string as is; an exception as ``Type: message`` for it and every
    exception chained to it (``raise ... from`` and "during handling of")."""
    if isinstance(error, str):
        return error
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__
    return "\n".join(parts)


def explain(error: BaseException | str) -> Explanation | None:
    """Explain a known PyTorch error; None when the message is not one we know.

    >>> e = explain(RuntimeError("Torch not compiled with CUDA enabled"))
    >>> e.id
    'torch-not-compiled-with-cuda'
    >>> print(e.render())  # doctest: +ELLIPSIS
    This torch is a CPU-only build
    ...
    """
    text = error_text(error)
    for entry in KNOWN:
        explanation = entry.explain(text)
        if explanation is not None:
            return explanation
    return None
