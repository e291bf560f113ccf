"""Hugging Face models from a config: a transformers model built from a local folder or a config
written in the YAML, gradient checkpointing, and LoRA adapters through `peft`.

``model.target`` may name transformers' own loaders with a local folder::

    model:
      target: transformers:AutoModelForSequenceClassification.from_pretrained
      kwargs: {pretrained_model_name_or_path: ./my-bert, num_labels: 2}

or `from_config` here, which builds an untrained model from a config's fields (or a folder
holding a config.json), so that nothing is downloaded::

    model:
      target: torchwise.models.hf:from_config
      kwargs: {auto_class: AutoModelForSequenceClassification,
               config: {model_type: bert, hidden_size: 32, num_hidden_layers: 2, ...}}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch import nn

from torchwise.errors import ConfigError, ModelError

#: Keyword arguments of transformers' loaders that name a local folder (resolved from the config's folder).
FOLDER_KWARGS = ("pretrained_model_name_or_path", "config")


def from_config(*, auto_class: str = "AutoModel", config: dict[str, Any] | str, seed: int = 0,
                **kwargs: Any) -> nn.Module:
    """``transformers.<auto_class>.from_config`` of ``config`` (a dict with ``model_type``, or a
    folder with a config.json), with ``kwargs`` set on the config (``num_labels: 3``); the
    weights are initialised from ``seed``.

    >>> model = from_config(auto_class="AutoModelForSequenceClassification", num_labels=2,
    ...                     config={"model_type": "bert", "hidden_size": 16, "num_hidden_layers": 1,
    ...                             "num_attention_heads": 2, "intermediate_size": 32, "vocab_size": 50})
    >>> type(model).__name__, model.config.num_labels
    ('BertForSequenceClassification', 2)
    """
    import torch
    import transformers

    loader = getattr(transformers, auto_class, None)
    if loader is None or not hasattr(loader, "from_config"):
        raise ConfigError(f"transformers has no {auto_class} with from_config",
                          hint="use an Auto class such as AutoModelForSequenceClassification, "
                               "AutoModelForTokenClassification or AutoModelForCausalLM")
    if isinstance(config, dict):
        fields = dict(config)
        model_type = fields.pop("model_type", None)
        if model_type is None:
            raise ConfigError("model.kwargs.config needs a model_type (bert, gpt2, ...)",
                              hint="add model_type: bert (the name in the model's config.json)")
        hf_config = transformers.AutoConfig.for_model(model_type, **fields, **kwargs)
    else:
        hf_config = transformers.AutoConfig.from_pretrained(str(config), local_files_only=True, **kwargs)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return loader.from_config(hf_config)


def resolve_folders(kwargs: dict[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """Folder arguments of transformers' loaders, relative to the config file's folder."""
    resolved = dict(kwargs)
    for key in FOLDER_KWARGS:
        value = resolved.get(key)
        if isinstance(value, str) and base_dir is not None and (base_dir / value).exists():
            resolved[key] = str((base_dir / value).resolve())
    return resolved


def enable_gradient_checkpointing(model: nn.Module) -> None:
    """The model's own ``activation_checkpointing_enable()`` (transformers 5's name) or
    ``gradient_checkpointing_enable()`` (earlier transformers, and other libraries' models)."""
    enable = getattr(model, "activation_checkpointing_enable", None) or getattr(
        model, "gradient_checkpointing_enable", None)
    if not callable(enable):
        raise ModelError(f"model.gradient_checkpointing is on, but {type(model).__name__} has no "
                         "gradient_checkpointing_enable()",
                         hint="use torch.utils.checkpoint.checkpoint inside your forward(), or turn the "
                              "option off")
    enable()


def add_lora(model: nn.Module, *, r: int, alpha: int, target_modules: list[str], dropout: float = 0.0) -> nn.Module:
    """``peft.get_peft_model`` with a LoRA config: every weight frozen but the adapters (and the
    task head that peft keeps trainable for the model's task type)."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError:
        raise ConfigError("model.lora needs peft", hint="pip install 'torchwise[peft]'") from None
    config = LoraConfig(r=r, lora_alpha=alpha, target_modules=list(target_modules), lora_dropout=dropout,
                        task_type=_task_type(model))
    try:
        return get_peft_model(model, config)
    except ValueError as err:
        raise ConfigError(f"model.lora cannot adapt {type(model).__name__}: {str(err).splitlines()[0]}",
                          hint="model.lora.target_modules must name Linear layers of the model, "
                               "e.g. [query, value] for BERT, [c_attn] for GPT-2") from None


def _task_type(model: nn.Module) -> str | None:
    name = type(model).__name__
    for suffix, task in (("ForSequenceClassification", "SEQ_CLS"), ("ForTokenClassification", "TOKEN_CLS"),
                         ("ForCausalLM", "CAUSAL_LM"), ("LMHeadModel", "CAUSAL_LM")):
        if name.endswith(suffix):
            return task
    return None


def parameter_counts(model: nn.Module) -> dict[str, int]:
    """Trainable and total parameters (each tensor once)."""
    unique = {id(p): p for p in model.parameters()}.values()
    return {"trainable": sum(p.numel() for p in unique if p.requires_grad), "total": sum(p.numel() for p in unique)}
