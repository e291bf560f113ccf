"""Known errors of the machine's own memory (RAM, not the GPU's) running out.

torch's CPU allocator says "DefaultCPUAllocator: not enough memory: you tried to allocate N bytes"
and NumPy "Unable to allocate 9.54 GiB for an array with shape (...)": both name the size of the one
allocation that failed, which usually says whether it is a whole dataset, a huge intermediate or a
checkpoint loaded into RAM.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _size(text: str) -> str:
    if text.isdigit():
        value = int(text)
        for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if value >= scale:
                return f"{value / scale:.2f} {unit}"
        return f"{value} bytes"
    return text


def _host_memory(match: re.Match[str], text: str) -> Explanation:
    size = _size(match.group(1) or match.group(2))
    array = f" (a NumPy array of shape {match.group(3)})" if match.group(3) else ""
    return answer(
        title=f"The machine's RAM ran out: {size} could not be allocated{array}",
        meaning=(
            f"An allocation of {size} in main memory (CPU RAM, not the GPU's) failed: the process,"
            " with what it already holds, needs more than the machine (or the container's limit) has."
        ),
        cause=(
            "A whole dataset or feature matrix built in memory at once, an intermediate far larger"
            " than intended (a broadcast or outer product: check the shape in the message), a"
            " checkpoint or model loaded into RAM (map_location='cpu' of a large model), or many"
            " DataLoader workers each holding a copy of the data."
        ),
        fix=(
            "Check that the size is what the code meant (the shape); process the data in batches or"
            " memory-map it (np.load(..., mmap_mode='r'), datasets streaming) instead of loading it"
            " whole, use float32/float16 instead of float64, fewer workers, or load large models with"
            " low_cpu_mem_usage/mmap=True; or run on a machine with more RAM (or raise the container's limit)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "host-out-of-memory",
        r"DefaultCPUAllocator: (?:not enough memory|can't allocate memory): you tried to allocate (\d+) bytes"
        r"|Unable to allocate (\d+(?:\.\d+)? [KMGT]i?B) for an array with shape (\([^)\n]*\))",
        _host_memory,
    ),
]
