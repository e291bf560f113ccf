"""Round 10: a Linear's two widths that are both the hidden sizes of standard encoders.

``mat1 and mat2 shapes cannot be multiplied (1370x384 and 1024x2048)``: 384 and 1024 share a large
factor, so the flatten reading (a conv map flattened at another image size) would fit the numbers,
but they are also the widths of a small and a large vision transformer, and rows of 384 features by
the thousand are tokens, not flattened images. Where both widths are encoder widths and neither is a
whole multiple of the other (which an unflattened [N, C, L] input would give), the features come from
an encoder of another size or family than the one the layer was trained after: the reading the
floors' threads settled on (ComfyUI's 4096-wide T5 conditioning into a 768-wide cross-attention, a
ViT-S backbone's features into a ViT-L head, CLIP's 768 where umT5's 4096 is wanted). What it cannot
see: a hand-sized MLP whose widths happen to be these numbers keeps this reading. Pure text work.

>>> encoder_widths(384, 1024), encoder_widths(768, 4096), encoder_widths(400, 256), encoder_widths(512, 1024)
(True, True, False, False)
>>> encoder_widths(1152, 2048)
False
"""

from __future__ import annotations

import math
from fractions import Fraction

# hidden sizes of widely used encoders, with models that have them (facts of their configs)
ENCODERS: dict[int, str] = {
    384: "ViT-S, DINOv2-S, MiniLM",
    512: "CLIP ViT-B's joint space, T5-small",
    640: "ViT-S/8 variants",
    768: "ViT-B, BERT-base, CLIP ViT-L's text encoder",
    1024: "ViT-L, BERT-large, CLIP ViT-H's text encoder",
    1152: "SigLIP-so400m",
    1280: "ViT-H, CLIP ViT-bigG's text encoder",
    1536: "DINOv2-g",
    2048: "T5-XL's hidden size, ResNet-50's pooled features",
    2560: "Phi-2",
    3072: "Llama-3.2-3B",
    4096: "T5-XXL/umT5-XXL, Llama-7B",
    5120: "Llama-13B",
    8192: "Llama-70B",
}


def _square(number: int) -> bool:
    return math.isqrt(number) ** 2 == number


def encoder_widths(features: int, expected: int) -> bool:
    """Whether both widths are encoder widths and neither a whole multiple of the other, nor in the
    ratio of two squares: one conv map flattened at two image sizes (128x3x3 = 1152 against 128x4x4 =
    2048, a ratio of 9 to 16) keeps its channel count, and the flatten reading is the right one."""
    low, high = sorted((features, expected))
    ratio = Fraction(features, expected)
    conv_map = _square(ratio.numerator) and _square(ratio.denominator)
    both = features in ENCODERS and expected in ENCODERS
    return features != expected and both and high % low != 0 and not conv_map


def encoder_reading(features: int, expected: int) -> tuple[str, str]:
    """(cause, fix): the features come from an encoder of another size or family than the layer's."""
    return (
        f"{features} and {expected} are both encoders' hidden sizes ({features}: {ENCODERS[features]};"
        f" {expected}: {ENCODERS[expected]}): the features, embeddings or conditioning reaching this layer"
        f" come from an encoder {features} wide, where the layer (its checkpoint or config) was built after"
        f" one {expected} wide: a backbone or text encoder of another size or family than the one it was"
        " trained with",
        f"Use the encoder the layer was built after (the {expected}-wide one its checkpoint or config names:"
        " the same family and size throughout, backbone, text encoder, adapters and head), or a head"
        f" checkpoint made for the {features}-wide encoder you load.",
    )
