"""Known PyTorch error -> what it means, the likely cause, and the fix.

``explain`` takes an exception or any text holding the message (a whole traceback, or a long
log with warnings before the error) and returns an ``Explanation``, or None for a message it
does not know. The table is ``KNOWN``: one entry per error, each a regex and a builder that
reads the numbers out of the message. The entries live in small files by family:
``code_errors`` (model code, state dicts, devices, dtypes), ``device_errors`` (GPU
numbers, device names, generators), ``loss_errors`` (input vs target),
``shape_errors`` (layer input shapes), ``tensor_errors`` (views, index dtypes, in-place
results, non-scalar backward, GradScaler), ``autograd_errors``, ``worker_errors`` (DataLoader
workers), ``distributed_errors``, ``compile_errors`` (compile, export, ONNX),
``runtime_errors`` (GPU memory, kernels, libraries), ``setup_errors`` (CUDA builds, drivers,
the machine) and ``install_errors`` (importing torch and compiled extensions). No torch import.

>>> e = explain("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x784 and 128x10)")
>>> e.title
'A Linear layer expects 128 input features but got 784'
>>> explain("ValueError: something else entirely") is None
True
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError
from torchwise.explain.families import (
    autograd_errors,
    code_errors,
    compile_errors,
    device_errors,
    distributed_errors,
    install_errors,
    loss_errors,
    runtime_errors,
    setup_errors,
    shape_errors,
    tensor_errors,
    worker_errors,
)

KNOWN: list[KnownError] = [
    *code_errors.KNOWN,
    *device_errors.KNOWN,
    *loss_errors.KNOWN,
    *shape_errors.KNOWN,
    *tensor_errors.KNOWN,
    *autograd_errors.KNOWN,
    *worker_errors.KNOWN,
    *distributed_errors.KNOWN,
    *compile_errors.KNOWN,
    *runtime_errors.KNOWN,
    *setup_errors.KNOWN,
    *install_errors.KNOWN,
]

# A line that only warns: "UserWarning: ...", glog "W0110 12:27:06 ...", "[W ...]", "WARNING:".
WARNING_LINE = re.compile(r"Warning\b|^\s*(?:\[rank\d+\]:)?\[?W\d{4} |^\s*\[W |WARNING", re.MULTILINE)


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


def _in_warning(text: str, position: int) -> bool:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    line = text[start : end if end >= 0 else len(text)]
    # "NotImplementedError: ... WARNING: this will be slower" is an error that mentions a warning
    return bool(WARNING_LINE.search(line)) and not re.search(r"\w(?:Error|Exception)\b", line)


def explain(error: BaseException | str) -> Explanation | None:
    """Explain a known PyTorch error; None when the message is not one we know.

    In a long text several known messages can occur. The one that stopped the program wins:
    an error line beats a warning line (a recompilation warning before the crash), a specific
    message beats a catch-all one (a device-side assert echoing an earlier index error), and
    otherwise the later line wins (the last exception of a traceback is the one raised).

    >>> e = explain(RuntimeError("Torch not compiled with CUDA enabled"))
    >>> e.id
    'torch-not-compiled-with-cuda'
    >>> print(e.render())  # doctest: +ELLIPSIS
    This torch is a CPU-only build
    ...
    """
    text = error_text(error)
    best: tuple[tuple[bool, bool, int], KnownError, re.Match[str]] | None = None
    for entry in KNOWN:
        match = entry.last_match(text)
        if match is None:
            continue
        rank = (not _in_warning(text, match.start()), not entry.generic, match.start())
        if best is None or rank > best[0]:  # ties: the earlier table entry (more specific) wins
            best = (rank, entry, match)
    return best[1].explain(text, best[2]) if best else None
