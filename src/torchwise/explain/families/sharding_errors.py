"""Known errors of sharded data parallel training: FSDP's flat parameters and DeepSpeed ZeRO.

FSDP flattens the parameters of each wrapped unit into one ``FlatParameter``, so everything in a
unit must agree: one dtype, one ``requires_grad``. ZeRO stage 3 partitions gradients across
ranks, so it cannot skip the gradient reduction of a micro-step the way DDP's ``no_sync()``
does. The messages name what disagreed; the usual source is a model that mixes kinds on
purpose (frozen base weights with trainable adapters, float32 norms in a bf16 model) or a
trainer's gradient accumulation.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _uniform_dtype(match: re.Match[str], text: str) -> Explanation:
    first, second = match.group(1), match.group(2)
    return answer(
        title=f"FSDP cannot flatten one unit holding both {first} and {second} parameters",
        meaning=(
            "FSDP stores the parameters of each wrapped unit in one flat tensor, which has one"
            f" dtype; this unit holds {first} and {second} parameters."
        ),
        cause=(
            "The model was loaded or cast to one dtype except some modules kept in another (a"
            " vision tower, norms or an adapter left in float32 while the rest is bf16, or"
            " parameters added after the cast), and they share an FSDP unit."
        ),
        fix=(
            f"Give the whole model one dtype before wrapping (model.to(torch.{first.split('.')[-1]}),"
            " or torch_dtype= for every part when loading) and let FSDP's MixedPrecision policy"
            " choose the compute dtype; or wrap the odd modules as their own FSDP units."
        ),
    )


def _uniform_requires_grad(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="FSDP cannot flatten one unit holding frozen and trainable parameters",
        meaning=(
            "FSDP stores the parameters of each wrapped unit in one flat tensor, which is either"
            " trainable or not; this unit mixes parameters with requires_grad True and False."
        ),
        cause=(
            "Part of the model is frozen inside a unit that also trains: adapters (LoRA/PEFT) on"
            " frozen base weights, or a frozen embedding or encoder wrapped together with"
            " trainable layers."
        ),
        fix=(
            "Wrap with use_orig_params=True (torch >= 2.0; accelerate/Trainer: fsdp_use_orig_params"
            " true), which keeps each parameter's requires_grad; or choose the wrap policy so frozen"
            " and trainable parameters fall in different units."
        ),
    )


def _zero3_no_sync(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="DeepSpeed ZeRO stage 3 cannot run no_sync() (gradient accumulation)",
        meaning=(
            "no_sync() skips the gradient reduction of a micro-step so gradients accumulate"
            " locally; under ZeRO stage 3 each rank holds only its shard of the gradients, so"
            " there is nothing local to accumulate in and DeepSpeed refuses."
        ),
        cause=(
            "The training loop or the trainer (transformers Trainer, accelerate) wraps the"
            " micro-steps of gradient accumulation in model.no_sync(), as it does for DDP, while"
            " the engine runs ZeRO stage 3."
        ),
        fix=(
            "Let DeepSpeed accumulate: set gradient_accumulation_steps in the DeepSpeed config"
            " (and 1 in the trainer, or the same value through accelerate's DeepSpeed plugin so"
            " it does not call no_sync), or use ZeRO stage 1/2, or set gradient accumulation to 1;"
            " a newer transformers/accelerate skips no_sync under DeepSpeed."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "fsdp-uniform-dtype",
        r"Must flatten tensors with uniform dtype but got ([\w.]+) and ([\w.]+)",
        _uniform_dtype,
    ),
    known(
        "fsdp-uniform-requires-grad",
        r"`?FlatParameter`? requires uniform `?requires_grad`?",
        _uniform_requires_grad,
    ),
    known(
        "zero3-no-sync",
        r"no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage 3",
        _zero3_no_sync,
    ),
]
