"""Known errors of the tensors handed to an optimizer or a recurrent layer.

An optimizer takes leaf tensors (parameters): "can't optimize a non-leaf
Tensor" is a tensor computed from a parameter (``.to(device)``/``.cuda()``/``* 1`` after
``requires_grad=True``). cuDNN's RNNs check their input, hidden state and weights live on one device and say
which of them does not: "Input and hidden tensors are not at the same device, found input tensor
at cuda:0 and hidden tensor at cpu".
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _non_leaf(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The optimizer was given a tensor computed from another, not a leaf parameter",
        meaning=(
            "Optimizers update leaf tensors in place; this one has a grad_fn (it is the result of an"
            " operation), so its .grad is never filled and it cannot be optimized."
        ),
        cause=(
            "A tensor made with requires_grad=True was then moved or cast (t = torch.randn(...,"
            " requires_grad=True).to(device) / .cuda() / .double()), which returns a new, non-leaf"
            " tensor; or an expression of parameters was passed instead of the parameters."
        ),
        fix=(
            "Create it on its device and dtype first and mark it after: t = torch.randn(...,"
            " device=device).requires_grad_() (or nn.Parameter(torch.randn(..., device=device)) in a"
            " module), and pass that leaf to the optimizer."
        ),
    )


def _rnn_devices(match: re.Match[str], text: str) -> Explanation:
    input_at, other, other_at = match.group(2), match.group(3), match.group(4)
    on_cpu = "input" if input_at == "cpu" else other
    if on_cpu == "hidden":
        cause = (
            "The initial hidden state (h0/c0) was created on the CPU (torch.zeros(...) without"
            " device=) while the input and the layer are on the GPU."
        )
        fix = (
            "Create it where the input is: torch.zeros(layers, batch, hidden, device=x.device), or pass no"
            " hidden state."
        )
    elif on_cpu == "parameter":
        cause = (
            "The recurrent layer's weights are on the CPU: the model (or this layer, built later) was not"
            " moved to the GPU."
        )
        fix = "Move the model after building all its layers: model.to(device), and the inputs with x.to(device)."
    else:
        cause = "The input batch is on the CPU while the layer's weights are on the GPU."
        fix = "Move each batch to the model's device: x = x.to(device) before calling the model."
    return answer(
        title=f"A recurrent layer got its input on {input_at} and its {other} tensors on {other_at}",
        meaning="An RNN/LSTM/GRU needs its input, hidden state and weights on one device.",
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known("optimize-non-leaf", r"can't optimize a non-leaf (?:Tensor|Variable)", _non_leaf),
    known(
        "rnn-tensors-two-devices",
        r"Input and (parameter|hidden) tensors are not at the same device, found input tensor at (\S+?) and"
        r" (parameter|hidden) tensor at (\S+?)(?=[\s,.;]|$)",
        _rnn_devices,
    ),
]
