"""Known errors of the flash-attn kernels on a GPU they were not built for.

flash-attn's CUDA kernels check the GPU before running: "FlashAttention only supports Ampere GPUs
or newer." (compute capability 8.0+; T4, V100, RTX 20xx and Quadro RTX cards are older), raised
whenever a model is loaded with attn_implementation='flash_attention_2' or a script's
use_flash_attn option. A new GPU (Blackwell, RTX 50xx) gets the same words from a flash-attn build
that predates it.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

OLD_GPU = re.compile(r"\b(?:T4|V100|P100|P40|K80|RTX 20\d0|GTX|Quadro RTX|Titan [VX]|Turing|Volta|Pascal)\b")
NEW_GPU = re.compile(r"\b(?:RTX 50\d0|B200|B100|GB200|Blackwell|sm_?1[02]0)\b")


def _flash_attention(match: re.Match[str], text: str) -> Explanation:
    new = NEW_GPU.search(text)
    if new and not OLD_GPU.search(text):
        cause = (
            f"The GPU ({new.group(0)}) is newer than the installed flash-attn build, which holds kernels only"
            " for the architectures it was compiled for, so its check fails on a card it does not know."
        )
        fix = (
            "Install a flash-attn (or xformers) release built for this GPU, or build it from source with"
            " this architecture; meanwhile load the model with attn_implementation='sdpa'."
        )
    else:
        cause = (
            "The GPU is older than Ampere (T4, V100, P100, RTX 20xx, Quadro RTX: compute capability below"
            " 8.0), which flash-attn 2 does not support, and the model or script asks for it"
            " (attn_implementation='flash_attention_2', use_flash_attn=True, a config default)."
        )
        fix = (
            "Turn flash attention off for this GPU: attn_implementation='sdpa' (or 'eager') in"
            " from_pretrained, the script's use_flash_attn/--flash_attn false, and fp16 instead of bf16;"
            " or run on an Ampere or newer GPU (A100, A10, RTX 30xx/40xx)."
        )
    return answer(
        title="flash-attn refused this GPU: it needs an Ampere (compute capability 8.0) or newer card",
        meaning="flash-attn's kernels checked the GPU's compute capability before running and refused it.",
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known("flash-attention-gpu-unsupported", r"FlashAttention only supports Ampere GPUs or newer", _flash_attention),
]
