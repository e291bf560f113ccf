"""``facts.json``: what the run knew about its data and model, for `diagnose` to reason with.

Written once, before the first step, from what the run builds anyway (no extra pass over a
dataset it cannot read as tensors)::

    {"task": "classification", "train_samples": 512,
     "class_counts": [461, 51],                      # classification, labels readable as a tensor
     "target": {"mean": 2.0e5, "variance": 2.4e9},   # regression, targets readable as a tensor
     "parameters": {"trainable": 4, "frozen": 68352},
     "batchnorm_layers": ["1", "4"], "batch_size": 2, "last_batch_size": 1,
     "input_module": "0"}

``batch_size`` is what one forward pass of a BatchNorm layer sees (``train.batch_size``, the
micro-batch: ``accumulate`` does not enlarge it), ``last_batch_size`` the smaller last batch of an
epoch when the set does not divide evenly. ``input_module`` is the first module with parameters
in registration order, the one the inputs meet first in a plain stack.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

BATCHNORM = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)


def run_facts(model: nn.Module, *, task: str, train: Any, loader: DataLoader) -> dict[str, Any]:
    facts: dict[str, Any] = {"task": task}
    if hasattr(train, "__len__"):
        facts["train_samples"] = len(train)
    target = train.tensors[1] if isinstance(train, TensorDataset) and len(train.tensors) > 1 else None
    if target is not None and task == "classification" and not target.is_floating_point():
        labels = target.flatten()
        facts["class_counts"] = torch.bincount(labels[labels >= 0]).tolist()
    elif target is not None and task == "regression" and target.is_floating_point():
        facts["target"] = {"mean": float(target.mean()), "variance": float(target.var(unbiased=False)),
                           "min": float(target.min()), "max": float(target.max())}
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    facts["parameters"] = {"trainable": trainable, "frozen": sum(p.numel() for p in model.parameters()) - trainable}
    facts["batchnorm_layers"] = [name for name, m in model.named_modules() if isinstance(m, BATCHNORM)]
    facts["batch_size"] = loader.batch_size
    if loader.batch_size and not loader.drop_last and "train_samples" in facts:
        facts["last_batch_size"] = facts["train_samples"] % loader.batch_size or loader.batch_size
    facts["input_module"] = next((name for name, m in model.named_modules()
                                  if name and any(True for _ in m.parameters(recurse=False))), None)
    return facts
