"""Issue 21, round 7: families for messages whose cause the message or the paste bears out, from
round 6's held-out half (measured, so a regression floor; each text from its thread, numbers in
``heldout6/texts.yaml``) and from the errors' sources: a compiled extension without kernels for
the GPU, a CUDA toolkit or host compiler missing for a build, an ONNX opset newer than the
exporter, TorchScript's unknown operators and variadic functions, MPS kernels without a dtype, a
pandas label looked up with a position, Lightning's scheduler checks."""

from __future__ import annotations

import pytest
from tests.explain.pinned import answer_text, working_texts

HELDOUT6 = working_texts("heldout6")

# (text, table entry, phrases the answer holds)
CASES: list[tuple[str, str, list[str]]] = [
    # github.com/facebookresearch/detectron2/issues/62: the error line names the extension's kernel
    (HELDOUT6[21], "extension-no-kernels", ["ROIAlign_forward_cuda", "TORCH_CUDA_ARCH_LIST"]),
]


@pytest.mark.parametrize(("message", "error_id", "phrases"), CASES)
def test_a_round7_family_answers_with_what_the_message_says(message, error_id, phrases):
    text = answer_text(message, error_id)
    assert all(phrase in text for phrase in phrases), [phrase for phrase in phrases if phrase not in text]


