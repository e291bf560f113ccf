"""Known errors of torch.export that name what the traced module holds.

torch.export records a graph whose only tensors are its inputs, the module's registered
parameters and buffers, and constants; the message names the kind of tensor that is none of
these, and the fix follows: register it, or pass it in.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _unregistered_tensor(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="torch.export found a tensor attribute that is not a parameter, buffer or input",
        meaning=(
            "The module's forward reads a tensor that is not registered on the module (not a"
            " parameter or buffer) and is not passed to forward, so the exported graph has no"
            " way to hold it."
        ),
        cause=(
            "A tensor was stored as a plain attribute (self.mask = torch.ones(...), a tensor in a"
            " list or dict attribute, or one created in __init__ and kept on the module without"
            " register_buffer), or forward reads a global tensor."
        ),
        fix=(
            "Register it: self.register_buffer('mask', torch.ones(...)) (persistent=False when it"
            " should not go into the state_dict), or pass it to forward as an input; wrap a"
            " value that never changes in a function marked @assume_constant_result only if it"
            " really is a constant."
        ),
    )


def _ort_providers(match: re.Match[str], text: str) -> Explanation:
    providers = match.group(1)
    return answer(
        title="onnxruntime needs the providers argument (ORT 1.9 and later)",
        meaning=(
            f"This onnxruntime build has several execution providers ({providers}); since 1.9 an"
            " InferenceSession must be told which to use."
        ),
        cause="The code creates onnxruntime.InferenceSession(path) without providers=, as older onnxruntime allowed.",
        fix=(
            "Pass them explicitly: onnxruntime.InferenceSession(path, providers=['CUDAExecutionProvider',"
            " 'CPUExecutionProvider']) (the list the message names, in order of preference)."
        ),
    )

def _opset_unsupported(match: re.Match[str], text: str) -> Explanation:
    opset = int(match.group(1))
    return answer(
        title=f"This torch's ONNX exporter does not support opset {opset}",
        meaning=(
            "torch.onnx.export writes operators of the opset_version it is given, and each torch"
            f" release knows opsets only up to a version; opset {opset} is past this one's."
        ),
        cause=(
            f"The export asks for opset_version={opset} (an export script's default, or its --opset"
            " flag) while the installed torch is older than that opset (torch 1.7 stops at 12, 1.8"
            " at 13)."
        ),
        fix=(
            f"Export with an opset this torch supports: opset_version={opset - 1} or lower (the"
            " script's --opset option); or upgrade torch to a release that exports opset"
            f" {opset}."
        ),
    )


KNOWN: list[KnownError] = [
    known("onnx-opset-unsupported", r"Unsupported ONNX opset version:? (\d+)", _opset_unsupported),
    known(
        "export-unregistered-tensor",
        r"Cannot export model which references tensors that are neither buffers/parameters/constants"
        r"\s+nor are direct inputs",
        _unregistered_tensor,
    ),
    known(
        "onnxruntime-providers",
        r"This ORT build has (\[[^\]]*\]) enabled\. Since ORT 1\.9, you are required to explicitly set"
        r" the providers parameter",
        _ort_providers,
    ),
]
