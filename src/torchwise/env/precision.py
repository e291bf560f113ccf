"""Which autocast precision a device supports; shared by `doctor` and the trainer."""

from __future__ import annotations


def pick_precision(device_type: str, bf16_supported: bool) -> str:
    """The precision ``auto`` means on a device.

    >>> pick_precision("cuda", True), pick_precision("cuda", False), pick_precision("cpu", True)
    ('bf16', 'fp16', 'fp32')
    """
    if device_type == "cuda":
        return "bf16" if bf16_supported else "fp16"
    # bf16 autocast on CPU is slower than fp32 on most CPUs without AMX; opt in explicitly.
    return "fp32"
