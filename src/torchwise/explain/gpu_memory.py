r"""What a CUDA out-of-memory message's own numbers say about who holds the GPU's memory.

torch prints the GPU's total and free memory and what PyTorch reserved (before 2.1) or what this
process holds (2.1 and later); what neither accounts for is held by other processes or by another
library in this one. Pure text work.

>>> held_elsewhere("(GPU 0; 7.79 GiB total capacity; 12.44 MiB free; 130.00 MiB reserved in total by PyTorch)",
...                r"([\d.]+ [KMGT]?i?B)", "7.79 GiB", "12.44 MiB")[:41]
'PyTorch in this process holds 0.13 GiB of'
"""

from __future__ import annotations

import re


def _bytes(amount: str) -> float:
    number, unit = amount.split()
    return float(number) * 1024 ** "BKMGT".index(unit[0])


def held_elsewhere(text: str, size: str, total: str | None, free: str | None) -> str | None:
    """What the message says is held outside this process's PyTorch, where that is most of the GPU:
    total minus free minus what PyTorch reserved (torch before 2.1) or what this process holds (later)."""
    if not total or not free:
        return None
    reserved = re.search(rf"{size} reserved in total by PyTorch", text)
    own = re.search(rf"this process has {size} memory in use", text)
    held = own or reserved
    # torch before 1.4 printed what its cache held besides the allocated memory: "X already allocated;
    # ...; Y cached", so PyTorch held X + Y
    allocated, cached = re.search(rf"{size} already allocated", text), re.search(rf"{size} cached\)", text)
    if held is None and not (allocated and cached):
        return None
    holds = _bytes(held.group(1)) if held else _bytes(allocated.group(1)) + _bytes(cached.group(1))
    outside = _bytes(total) - _bytes(free) - holds
    if outside < 0.5 * _bytes(total) or outside < 2 * 1024**3:
        return None
    whose = "this process" if own else "PyTorch in this process"
    return (f"{whose} holds {holds / 1024**3:.2f} GiB of {total}, {free} is free, and about"
            f" {outside / 1024**3:.1f} GiB is used by others")
