"""Known errors of activation checkpointing (torch.utils.checkpoint) that name the call pattern it
cannot serve: the reentrant implementation runs its own backward inside the outer one, so it
cannot be differentiated with ``torch.autograd.grad`` or ``backward(inputs=...)``, and it needs an
output that requires grad to hook into.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _grad_or_inputs(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="Reentrant checkpointing cannot run under autograd.grad or backward(inputs=...)",
        meaning=(
            "torch.utils.checkpoint with use_reentrant=True recomputes its segment in a nested"
            " backward, which only works for a plain loss.backward()."
        ),
        cause=(
            "The model uses reentrant checkpointing (the old default of torch.utils.checkpoint, or"
            " a library's gradient_checkpointing) while the loop computes gradients with"
            " torch.autograd.grad (a gradient penalty, meta-learning) or passes inputs= to backward."
        ),
        fix=(
            "Use non-reentrant checkpointing: checkpoint(fn, x, use_reentrant=False) (Hugging Face:"
            " model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={'use_reentrant':"
            " False})); or call loss.backward() without inputs."
        ),
    )


def _no_output_requires_grad(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A checkpointed segment has no output that requires grad",
        meaning=(
            "Reentrant checkpointing recomputes a segment during backward only through outputs that"
            " require grad; none of this segment's do, so its backward has nothing to recompute and"
            " raises."
        ),
        cause=(
            "Everything in the segment is frozen and its input does not require grad: gradient"
            " checkpointing on a frozen base model (LoRA/adapters, a frozen encoder) whose input"
            " embeddings do not require grad."
        ),
        fix=(
            "Use use_reentrant=False; or make the input require grad (Hugging Face:"
            " model.enable_input_require_grads() before training adapters); or do not checkpoint"
            " blocks that do not train."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "checkpoint-reentrant-grad",
        r"Checkpointing is not compatible with \.grad\(\) or when an `inputs` parameter is passed to"
        r" \.backward\(\)",
        _grad_or_inputs,
    ),
    known(
        "checkpoint-no-grad-output",
        r"none of output has requires_grad=True, this checkpoint\(\) is not necessary",
        _no_output_requires_grad,
    ),
]
