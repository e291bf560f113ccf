"""Known errors of peft choosing the layers an adapter (LoRA, IA3, ...) is injected into.

get_peft_model needs ``target_modules``: names (or suffixes, or a regex) of submodules of the
base model. When the config leaves it None, peft looks the model's ``config.model_type`` up in
its own table of defaults (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING and the like);
a model type missing from that table raises "Please specify `target_modules` in `peft_config`".
When names are given but no submodule's name ends with any of them, inject_adapter raises
"Target modules {...} not found in the base model" with the list it was given.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

LIST_NAMES = "print([name for name, _ in model.named_modules()])"


def _no_default_targets(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="peft has no default target_modules for this model type: LoraConfig must name them",
        meaning=(
            "target_modules was not given, and peft's table of default target layers has no"
            " entry for this model's config.model_type, so it does not know which layers to"
            " adapt."
        ),
        cause=(
            "The base model is an architecture peft has no defaults for: a model loaded with"
            " trust_remote_code (ChatGLM, Baichuan, InternLM, ...), a custom nn.Module, or a model"
            " type newer than the installed peft."
        ),
        fix=(
            "Name the layers in the config: LoraConfig(target_modules=[...]) with the names of the"
            " model's attention (and optionally MLP) Linear layers, e.g. ['query_key_value'] for"
            " ChatGLM or BLOOM, ['W_pack'] for Baichuan, ['q_proj', 'v_proj'] for Llama-like"
            f" models; {LIST_NAMES} shows them. Or upgrade peft if the model type is new."
        ),
    )


def _targets_not_found(match: re.Match[str], text: str) -> Explanation:
    listed = match.group(1).strip()
    if re.fullmatch(r"[\[{(]\s*[\]})]|set\(\)", listed):
        cause = (
            "The list is EMPTY: the code that collects the layer names (a find_all_linear_names"
            " helper that looks for nn.Linear or bitsandbytes Linear4bit/8bit layers) found none"
            " in this model: the model is quantised with another layer class than the helper"
            " looks for, its layers are not torch Linear modules (remote or fused blocks), or the"
            " installed transformers/bitsandbytes loads it differently than the code expects."
        )
        fix = (
            f"Pass the names yourself (LoraConfig(target_modules=[...]); {LIST_NAMES} shows them),"
            " or fix the helper to match the model's Linear class; check that transformers,"
            " bitsandbytes and peft are the versions the training code was written for."
        )
    else:
        cause = (
            f"No layer of this model is named {listed}: those names belong to another architecture"
            " (q_proj/v_proj are Llama's; ChatGLM, BLOOM and Falcon use query_key_value, Baichuan"
            " W_pack, GPT-2 and Qwen-1 c_attn, T5 q/v), or the training script's default"
            " target list or model-type setting does not match the model loaded."
        )
        fix = (
            "Set target_modules to names the model has: print([n for n, _ in"
            " model.named_modules()]) and pick the attention projections (for a training"
            " framework, its lora_target / target_modules option)."
        )
    return answer(
        title=f"peft found no layer matching target_modules {listed}",
        meaning=(
            "get_peft_model looks for submodules whose names end with one of target_modules and"
            " found none, so there is nothing to put an adapter on."
        ),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "peft-no-default-targets",
        r"Please specify `?target_modules`?(?: or `?target_parameters`?)? ?in `?peft_config`?",
        _no_default_targets,
    ),
    known(
        "peft-targets-not-found",
        r"Target modules ?\(?((?:\[[^\]\n]*\]|\{[^}\n]*\}|set\(\)|[^\n]*?))\)? ?not found in the base model",
        _targets_not_found,
    ),
]
