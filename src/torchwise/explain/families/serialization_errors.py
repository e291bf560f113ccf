"""Known errors of writing tensors or NumPy values where plain data is expected.

``json.dump`` writes Python's own types only: a tensor, a NumPy scalar (``float32``, ``int64``)
or array in a metrics or config dict stops it with "Object of type Tensor is not JSON
serializable". safetensors refuses tensors that share memory (tied weights such as an LM head and
its embeddings; or many tensors that are views of one flat buffer), where ``torch.save`` would
have written them.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _json(match: re.Match[str], text: str) -> Explanation:
    kind = match.group(1) or "Tensor"  # "tensor(0, device='cuda:0') is not JSON serializable"
    tensor = kind in ("Tensor", "Parameter")
    convert = (
        "value.item() for a one-element tensor, value.tolist() for others"
        if tensor
        else "value.item() (or float(value)/int(value)) for a NumPy scalar, value.tolist() for an array"
        if kind not in ("device", "dtype")
        else "str(value)"
    )
    return answer(
        title=f"json cannot write a {kind}",
        meaning=f"json.dump/dumps writes dicts, lists, str, int, float, bool and None; a {kind} is none of these.",
        cause=(
            f"A {kind} was put in the dict being written (a metric or loss kept as a"
            f" {'tensor' if tensor else 'NumPy value'}, a config entry holding a {kind})."
        ),
        fix=f"Convert it when you store it: {convert}; or pass default= to json.dump (default=lambda v: v.tolist()).",
    )


def _shared(match: re.Match[str], text: str) -> Explanation:
    # the sets of names that share storage follow the message, wrapped over lines by some loggers
    listed = re.search(r"\[\{(.*?)\}\]", text[match.end() : match.end() + 20000], re.DOTALL)
    names = listed.group(0) if listed else ""
    if len(re.findall(r"'[^']+'", names)) > 3:
        return answer(
            title="safetensors refuses tensors that share memory: many weights are views of one buffer",
            meaning=(
                "safetensors stores each tensor's bytes once under its name; here many of the model's"
                " weights point into one storage, which it cannot write."
            ),
            cause=(
                "The state dict comes from a sharded or flattened model (DeepSpeed ZeRO-3 or FSDP flat"
                " parameters, or empty placeholders left after sharding), not from a gathered full model."
            ),
            fix=(
                "Gather the full weights before saving: accelerator.get_state_dict(model) /"
                " trainer.save_model() under ZeRO-3 (stage3_gather_16bit_weights_on_model_save: true), or"
                " zero_to_fp32.py on the DeepSpeed checkpoint, or FSDP's full state dict; then save that."
            ),
        )
    return answer(
        title="safetensors refuses tensors that share memory (tied weights)",
        meaning=(
            "safetensors stores each tensor's bytes once under its name and has no way to say that two"
            f" names are one storage{': ' + names if names else ''}."
        ),
        cause=(
            "The model ties weights (an LM head sharing the embedding matrix, a shared encoder) and"
            " its state_dict was passed to safetensors' save_file (or save_pretrained with"
            " safe_serialization) as is."
        ),
        fix=(
            "Use safetensors.torch.save_model(model, path) (and load_model), which drops the duplicates,"
            " or model.save_pretrained(...) of a transformers model that declares its tied weights;"
            " or clone the tied tensors before saving, or save with torch.save / safe_serialization=False."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "json-not-serializable",
        r"Object of type '?(Tensor|Parameter|ndarray|float(?:16|32|64)|u?int(?:8|16|32|64)|bool_|device|dtype)'?"
        r" is not JSON serializable|(?<![\w.])tensor\([^\n]*?\) is not JSON serializable",
        _json,
    ),
    known(
        "safetensors-shared-tensors",
        r"Some tensors share memory, this will lead to duplicate memory on disk",
        _shared,
    ),
]
