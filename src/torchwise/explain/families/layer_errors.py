"""Known errors where a normalisation layer's size does not fit its input.

BatchNorm keeps one running mean and variance per feature (channel); their length is fixed
when the layer is built, so a layer built for C channels fails on an input with another C.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _batchnorm_features(match: re.Match[str], text: str) -> Explanation:
    got, built = match.group(1), match.group(2)
    return answer(
        title=f"A BatchNorm layer built for {built} features got an input with {got}",
        meaning=(
            f"BatchNorm(num_features={built}) holds {built} running means and variances, one per"
            f" channel, and the input's channel dimension (dim 1) has {got}."
        ),
        cause=(
            f"The layer before it outputs {got} channels, not {built}: num_features differs from"
            " the previous conv's out_channels (or Linear's out_features), often after the"
            " channel widths were changed or a pretrained head was reused with another width."
        ),
        fix=(
            f"Build the layer for what arrives: nn.BatchNorm2d({got}) (BatchNorm1d for [N, C] or"
            " [N, C, L] inputs), or make the previous layer output"
            f" {built} channels. print(x.shape) before the layer shows the input."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "batchnorm-features",
        r"running_mean should contain (\d+) elements not (\d+)",
        _batchnorm_features,
    ),
]
