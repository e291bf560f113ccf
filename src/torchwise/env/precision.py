"""The precision rule ``torchwise train`` uses for ``precision: auto``, shared with the doctor.

>>> pick_precision("cuda", bf16_supported=True)
'bf16'
>>> pick_precision("cuda", bf16_supported=False)
'fp16'
>>> pick_precision("cpu", bf16_supported=True)
'fp32'
"""

from __future__ import annotations


def pick_precision(device_type: str, bf16_supported: bool) -> str:
    """Return ``"bf16"``, ``"fp16"`` (to be used with a GradScaler) or ``"fp32"``.

    CUDA with bf16 gets bf16: same range as fp32, so no loss scaling is needed. CUDA without
    bf16 (before Ampere) gets fp16 with a GradScaler. Everything else trains in fp32: CPU
    autocast buys little speed and costs accuracy, and MPS autocast is still patchy.
    """
    if device_type != "cuda":
        return "fp32"
    return "bf16" if bf16_supported else "fp16"
