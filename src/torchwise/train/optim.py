"""Optimizers with parameter groups: no weight decay on biases and norms, LR multipliers by name.

>>> import torch
>>> from torchwise.config import OptimConfig
>>> model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LayerNorm(4))
>>> opt = build_optimizer(model, OptimConfig(name="adamw", weight_decay=0.1))
>>> [(g["weight_decay"], len(g["params"])) for g in opt.param_groups]
[(0.1, 1), (0.0, 3)]
"""

from __future__ import annotations

import fnmatch

import torch
from torch import nn

from torchwise.config import OptimConfig
from torchwise.errors import ConfigError

# Weights of these layers scale activations; decaying them toward 0 fights the normalisation.
NORM_LAYERS = (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm, nn.LocalResponseNorm,
               nn.RMSNorm)


def parameter_groups(model: nn.Module, cfg: OptimConfig) -> list[dict]:
    """Group trainable parameters by (weight decay, LR multiplier), in a stable order."""
    groups: dict[tuple[float, float], list[nn.Parameter]] = {}
    matched: set[str] = set()
    seen: set[int] = set()
    for module_name, module in model.named_modules():
        for param_name, param in module.named_parameters(recurse=False):
            if not param.requires_grad or id(param) in seen:
                continue
            seen.add(id(param))
            no_decay = param.ndim <= 1 or isinstance(module, NORM_LAYERS)
            multiplier = 1.0
            for pattern, value in cfg.lr_multipliers.items():
                if fnmatch.fnmatchcase(module_name, pattern) or fnmatch.fnmatchcase(
                        f"{module_name}.{param_name}".lstrip("."), pattern):
                    multiplier = value
                    matched.add(pattern)
                    break
            key = (0.0 if no_decay else cfg.weight_decay, multiplier)
            groups.setdefault(key, []).append(param)
    unmatched = set(cfg.lr_multipliers) - matched
    if unmatched:
        names = [name for name, _ in model.named_modules() if name][:8]
        raise ConfigError(f"optim.lr_multipliers patterns {sorted(unmatched)} match no module",
                          hint=f"module names look like: {', '.join(names)}")
    if not groups:
        raise ConfigError("the model has no trainable parameters",
                          hint="check requires_grad on the model's parameters")
    return [{"params": params, "weight_decay": decay, "lr_multiplier": multiplier}
            for (decay, multiplier), params in sorted(groups.items(), key=lambda kv: (-kv[0][0], -kv[0][1]))]


def build_optimizer(model: nn.Module, cfg: OptimConfig) -> torch.optim.Optimizer:
    """SGD, Adam or AdamW over `parameter_groups`; each group's LR is ``lr * lr_multiplier``."""
    groups = parameter_groups(model, cfg)
    for group in groups:
        group["lr"] = cfg.lr * group["lr_multiplier"]
    if cfg.name == "sgd":
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=cfg.momentum, nesterov=cfg.nesterov)
    if cfg.name == "adam":
        return torch.optim.Adam(groups, lr=cfg.lr, betas=cfg.betas)
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas)


def set_lr(optimizer: torch.optim.Optimizer, *, peak_lr: float, factor: float) -> float:
    """Set every group's LR from the schedule factor; returns the base group's LR."""
    for group in optimizer.param_groups:
        group["lr"] = peak_lr * factor * group.get("lr_multiplier", 1.0)
    return peak_lr * factor
