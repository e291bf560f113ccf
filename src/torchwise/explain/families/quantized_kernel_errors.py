"""Known errors of quantized tensors sent where their kernels or their pickling do not reach.

- ``convert()`` picks the quantized kernels of the device the model sits on; cuDNN's quantized
  convolution handles ``groups=1`` only: "Quantized cudnn conv2d is currenty limited to groups = 1;
  received groups = 32" is a depthwise/grouped conv converted (or run) on the GPU.
- Sending a tensor to another process pickles it; torch rebuilds only some sparse layouts there:
  "rebuilding sparse tensor for layout torch.sparse_csr" is a CSR/CSC/BSR tensor crossing a process
  boundary (ray, multiprocessing, DataLoader workers) on a torch that cannot rebuild it.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _cudnn_groups(match: re.Match[str], text: str) -> Explanation:
    groups = match.group(1) or "more than 1"
    return answer(
        title=f"cuDNN's quantized conv2d takes groups=1 only; this layer has groups={groups}",
        meaning=(
            "The quantized model runs its convolutions with cuDNN's quantized kernel, which supports only"
            " ordinary (groups=1) convolutions; a grouped or depthwise one cannot run there."
        ),
        cause=(
            "The model was converted (torch.ao.quantization.convert) or is run while on the GPU, so its"
            " quantized convs use the cuDNN backend; grouped/depthwise convs (MobileNet, EfficientNet) are"
            " not supported by it."
        ),
        fix=(
            "Move the model to the CPU before convert (model.cpu(); convert(model)) and run the quantized"
            " model on the CPU (fbgemm/x86 or qnnpack backend), which supports grouped convolutions."
        ),
    )


def _sparse_rebuild(match: re.Match[str], text: str) -> Explanation:
    layout = match.group(1)
    return answer(
        title=f"A {layout} tensor cannot be rebuilt in the receiving process",
        meaning=(
            "Passing a tensor to another process pickles it, and the receiving side rebuilds it by layout;"
            f" this torch cannot rebuild a {layout} tensor."
        ),
        cause=(
            f"A {layout} tensor is sent across processes (ray tasks, multiprocessing queues, DataLoader"
            " workers returning it) with a torch release that only rebuilds COO sparse tensors."
        ),
        fix=(
            "Send its parts and rebuild it on the other side (crow_indices(), col_indices(), values(),"
            " size, then torch.sparse_csr_tensor(...)), or send it as COO (t.to_sparse_coo()) or dense;"
            " or use a newer torch that rebuilds this layout."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "quantized-cudnn-conv-groups",
        r"Quantized cudnn conv2d is current?l?y limited to groups = 1(?:; received groups = (\d+))?",
        _cudnn_groups,
    ),
    known("sparse-rebuild-layout", r"rebuilding sparse tensor for layout (torch\.sparse_\w+)", _sparse_rebuild),
]
