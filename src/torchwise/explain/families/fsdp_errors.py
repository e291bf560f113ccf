"""Known errors of wrapping a model in FSDP (FullyShardedDataParallel): every wrapped unit's
parameters are flattened into one FlatParameter, so they must agree on requires_grad and dtype.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _uniform_requires_grad(match: re.Match[str], text: str) -> Explanation:
    peft = bool(re.search(r"\bpeft\b|\blora\b|\blora_|\bqlora\b", text, re.IGNORECASE))
    return answer(
        title="FSDP cannot flatten frozen and trainable parameters into one unit",
        meaning=(
            "FSDP with use_orig_params=False (its default) flattens all parameters of a wrapped"
            " unit into one FlatParameter, which has one"
            " requires_grad for all of them; this unit mixes parameters that train with frozen ones."
        ),
        cause=(
            "The model is a PEFT/LoRA model: its frozen base weights and trainable adapter"
             " weights sit in the same transformer block, so every wrapped block mixes them."
             if peft else
             "Part of the model was frozen (requires_grad=False) inside modules that FSDP wraps"
             " as one unit, next to parameters that still train."
        ),
        fix=(
            "Wrap with use_orig_params=True (torch >= 2.0; in accelerate's FSDP config"
            " fsdp_use_orig_params: true), which keeps each parameter's own requires_grad; or"
            " freeze whole wrapped units only, or wrap the trainable modules as their own units."
        ),
    )


def _uniform_dtype(match: re.Match[str], text: str) -> Explanation:
    first, second = match.group(1), match.group(2)
    qlora = bool(re.search(r"qlora|load_in_4bit|bnb_4bit|bitsandbytes", text, re.IGNORECASE))
    return answer(
        title=f"FSDP cannot flatten {first} and {second} parameters into one unit",
        meaning=(
            "FSDP flattens all parameters of a wrapped unit into one FlatParameter of one dtype;"
            f" this unit holds parameters of both {first} and {second}."
        ),
        cause=(
            "The model is quantized to 4 bits (QLoRA) and bitsandbytes stores the packed weights"
            " in another dtype than the rest of the model (bnb_4bit_quant_storage unset), so"
            " wrapped units mix them."
            if qlora else
            "The model was loaded in a low-precision dtype while some of its modules keep"
            " float32 weights (a vision tower, norms or embeddings the model class keeps in"
            " float32), or only part of it was cast before wrapping."
        ),
        fix=(
            "Store the 4-bit weights in the model's dtype: BitsAndBytesConfig(load_in_4bit=True,"
            " bnb_4bit_quant_storage=torch.bfloat16) with torch_dtype=torch.bfloat16, and a"
            " transformers/accelerate/peft recent enough for FSDP with QLoRA."
            if qlora else
            "Give the whole model one dtype before wrapping (model.to(torch.float32), or load it"
            " all in bfloat16) and set the compute dtype with FSDP's MixedPrecision"
            " (accelerate: mixed_precision), or wrap the modules of the other dtype as their own units."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "fsdp-mixed-requires-grad",
        r"`?FlatParameter`? requires uniform `?requires_grad`?"
        r"|Must flatten tensors with uniform `?requires_grad`?",
        _uniform_requires_grad,
    ),
    known(
        "fsdp-mixed-dtype",
        r"(?:Must flatten tensors with|`?FlatParameter`? requires) uniform dtype but got (\S+) and ([\w.]+)",
        _uniform_dtype,
    ),
]
