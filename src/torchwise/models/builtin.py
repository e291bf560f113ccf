"""Built-in models: `linear`, `mlp`, `small-cnn`, and user models by target."""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any

import torch
from torch import nn

from torchwise.config import ModelConfig
from torchwise.errors import ConfigError, ModelError
from torchwise.targets import resolve_factory


def mlp(in_features: int, out_features: int, *, hidden: list[int] | tuple[int, ...] = (128,),
        dropout: float = 0.0) -> nn.Sequential:
    """Linear -> ReLU (-> Dropout) blocks, then a Linear head named ``head``."""
    layers: list[nn.Module] = []
    width = in_features
    for size in hidden:
        layers += [nn.Linear(width, size), nn.ReLU()]
        if dropout:
            layers.append(nn.Dropout(dropout))
        width = size
    model = nn.Sequential(*layers)
    model.add_module("head", nn.Linear(width, out_features))
    return model


class SmallCNN(nn.Module):
    """Two conv blocks with batch norm and a linear head; flat inputs are reshaped to ``image_shape``."""

    def __init__(self, image_shape: tuple[int, int, int], out_features: int, *, width: int = 32) -> None:
        super().__init__()
        channels, height, width_px = image_shape
        self.image_shape = tuple(image_shape)
        self.features = nn.Sequential(
            nn.Conv2d(channels, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(),
            nn.AdaptiveAvgPool2d(2),
        )
        self.head = nn.Linear(2 * width * 4, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.view(x.size(0), *self.image_shape)
        return self.head(self.features(x).flatten(1))


def build_model(cfg: ModelConfig, *, sample_shape: tuple[int, ...], out_features: int | None,
                base_dir: Path | None = None) -> nn.Module:
    """Build the configured model; built-ins take their sizes from one sample of the data
    (``out_features`` None: the data does not tell them, which only a `model.target` can live with)."""
    if cfg.target:
        factory = resolve_factory(cfg.target, search_dir=base_dir, makes=(nn.Module,), what="an nn.Module")
        kwargs = cfg.kwargs
        if cfg.target.startswith("transformers:"):
            from torchwise.models.hf import resolve_folders

            kwargs = resolve_folders(kwargs, base_dir)
        try:
            model = factory(**kwargs)
        except TypeError as err:
            raise ConfigError(f"{cfg.target}({', '.join(f'{k}=...' for k in cfg.kwargs)}) failed: {err}",
                              hint=f"model.kwargs must match the signature {_signature(factory)}") from None
        if not isinstance(model, nn.Module):
            raise ModelError(f"{cfg.target} returned {type(model).__name__}, not an nn.Module",
                             hint="point model.target at an nn.Module class or a function returning one")
        return with_options(model, cfg)
    if out_features is None:
        raise ConfigError("cannot tell the number of classes of this dataset for a built-in model",
                          hint="set task.num_classes")
    in_features = math.prod(sample_shape)
    kwargs = dict(cfg.kwargs)
    try:
        if cfg.name == "linear":
            return with_options(nn.Linear(in_features, out_features, **kwargs), cfg)
        if cfg.name == "mlp":
            return with_options(mlp(in_features, out_features, **kwargs), cfg)
        if cfg.name == "small-cnn":
            shape = kwargs.pop("image_shape", None) or _image_shape(sample_shape)
            return with_options(SmallCNN(tuple(shape), out_features, **kwargs), cfg)
    except TypeError as err:
        raise ConfigError(f"model {cfg.name!r} does not take {sorted(kwargs)}: {err}",
                          hint="see the built-in models' keyword arguments in the README") from None
    raise ConfigError("no model configured", hint="set model.name (linear, mlp, small-cnn) or model.target")


def with_options(model: nn.Module, cfg: ModelConfig) -> nn.Module:
    """``model.gradient_checkpointing`` and ``model.lora`` applied (a LoRA model is peft's wrapper)."""
    if cfg.gradient_checkpointing or cfg.lora is not None:
        from torchwise.models.hf import add_lora, enable_gradient_checkpointing

        if cfg.gradient_checkpointing:
            enable_gradient_checkpointing(model)
        if cfg.lora is not None:
            model = add_lora(model, r=cfg.lora.r, alpha=cfg.lora.alpha, target_modules=cfg.lora.target_modules,
                             dropout=cfg.lora.dropout)
    return model


def _image_shape(sample_shape: tuple[int, ...]) -> tuple[int, int, int]:
    if len(sample_shape) == 3:
        return sample_shape  # type: ignore[return-value]
    side = math.isqrt(math.prod(sample_shape))
    if len(sample_shape) == 1 and side * side == sample_shape[0]:
        return (1, side, side)
    raise ConfigError(f"small-cnn cannot tell the image shape of samples shaped {sample_shape}",
                      hint="set model.kwargs.image_shape: [channels, height, width]")


def _signature(obj: Any) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(unknown)"
