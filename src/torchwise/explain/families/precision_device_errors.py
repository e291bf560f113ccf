"""Known errors of a mixed-precision setting the device cannot run.

accelerate checks the requested mixed precision against the device before training:
"bf16 mixed precision requires PyTorch >= 1.10 and a supported device." (bfloat16 needs an Ampere
or newer NVIDIA GPU, a CPU/XPU/NPU with bf16, or recent MPS). Training scripts (kohya, diffusers
examples) pass ``--mixed_precision`` straight to it.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _bf16(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="bf16 mixed precision was asked for on a device without bfloat16",
        meaning=(
            "accelerate checked the device for bfloat16 support before training and found none"
            " (its torch is new enough, so the device is the reason)."
        ),
        cause=(
            "The GPU is older than Ampere: T4, V100, P100, RTX 20xx/GTX (Colab's free T4 included) have"
            " no bfloat16; or training runs on a CPU/MPS device without it."
        ),
        fix=(
            "Use fp16 instead on these GPUs: mixed_precision='fp16' (accelerate config, --mixed_precision"
            " fp16, and save_precision fp16 where the script has it), or 'no'; bf16 needs an A100/A10/"
            "RTX 30xx or newer (torch.cuda.is_bf16_supported() tells)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "accelerate-bf16-unsupported", r"bf16 mixed precision requires PyTorch >= [\d.]+ and a supported device", _bf16
    ),
]
