"""Known errors of quantizing a model with torch.ao.quantization (eager mode): module types that
need their own qconfig.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _embedding_qconfig(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="nn.Embedding can only be quantized with float_qparams_weight_only_qconfig",
        meaning=(
            "Embeddings are quantized weight-only, with per-row float scales; the int8 qconfigs"
            " used for Linear layers (dynamic or static) do not apply to them."
        ),
        cause=(
            "nn.Embedding was included in the modules to quantize (quantize_dynamic(model,"
            " {nn.Linear, nn.Embedding}), or a model-wide qconfig reaches its embeddings) with the"
            " default int8 qconfig."
        ),
        fix=(
            "Quantize only the Linear layers: quantize_dynamic(model, {nn.Linear},"
            " dtype=torch.qint8); or give embeddings their own qconfig: quantize_dynamic(model,"
            " qconfig_spec={nn.Linear: default_dynamic_qconfig, nn.Embedding:"
            " float_qparams_weight_only_qconfig}); in static or QAT flows set"
            " model.embedding.qconfig = float_qparams_weight_only_qconfig after the model-wide"
            " qconfig (or None to keep the embedding in float) before prepare."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "embedding-quantization-qconfig",
        r"Embedding quantization is only supported with float_qparams_weight_only_qconfig",
        _embedding_qconfig,
    ),
]
