"""Byte sizes as people write them: ``8GiB``, ``512MB``, ``1.5G``; and back to text.

>>> parse_size("8GiB"), parse_size("512 MB"), parse_size("1024")
(8589934592, 512000000, 1024)
>>> format_bytes(11_880_000), format_bytes(3 * 2**30)
('11.33 MiB', '3.00 GiB')
"""

from __future__ import annotations

import re

from torchwise.errors import ConfigError

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
          "t": 1000**4, "tb": 1000**4, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(text: str) -> int:
    """Bytes in ``text``; decimal units (GB) are powers of 1000, binary ones (GiB) of 1024."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _UNITS:
        raise ConfigError(f"cannot read {text!r} as a memory size",
                          hint="write a number with a unit, e.g. 8GiB, 512MiB or 16GB")
    return int(float(match.group(1)) * _UNITS[unit])


def format_bytes(size: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(size) >= scale:
            return f"{size / scale:.2f} {unit}"
    return f"{int(size)} B"
