"""``facts.json``: what the run knew about its data and model, for `diagnose` to reason with.

Written once, before the first step, from what the run builds anyway (no extra pass over a
dataset it cannot read as tensors)::

    {"task": "classification", "train_samples": 512,
     "class_counts": [461, 51],                      # classification, labels readable as a tensor
     "val_class_counts": [230, 26],                  # the same for the validation labels
     "target": {"mean": 2.0e5, "variance": 2.4e9, "output_variance": 2.4e9, ...},  # regression
     "binary_targets": {"outputs": 20, "positive_rate": 0.08, "prior_bce": 0.26},  # 0/1 float targets
     "loss": {"source": "task", "kind": "cross_entropy"},  # which loss ran (train/loss_kind.py)
     "parameters": {"trainable": 4, "frozen": 68352},
     "batchnorm_layers": ["1", "4"], "batch_size": 2, "last_batch_size": 1,
     "input_module": "0",
     "inputs": {"columns": 7, "rms_max": 5.4e4, "rms_max_column": 6, "rms_median": 1.0},
     "recurrent_layers": ["rnn"], "embedding_layers": [], "narrowest_layer": {"name": "2", "width": 1}}

``batch_size`` is what one forward pass of a BatchNorm layer sees (``train.batch_size``, the
micro-batch: ``accumulate`` does not enlarge it), ``last_batch_size`` the smaller last batch of an
epoch when the set does not divide evenly. ``input_module`` is the first module with parameters
in registration order, the one the inputs meet first in a plain stack.

``class_counts`` skip the task's ``ignore_index`` (padding tokens, void pixels). ``loss`` is added
after the first training batch has shown whether the model returns its own loss.

``inputs``: the root mean square of each input feature (a column of a table, a pixel of an
image) over the training set when its inputs are one float tensor: the scale the first layer
meets (standardised features measure about 1, raw dollars or 0..255 pixels hundreds or more).
``recurrent_layers``: RNN/LSTM/GRU modules (gradients through time multiply). ``narrowest_layer``:
the Linear layer with the fewest outputs (or convolution with the fewest channels) that is not the
model's last one, or the recurrent layer with the smallest hidden size: the width every sample
squeezes through in a plain stack (not an embedding: a table of one number per id is a bias as
often as a bottleneck). ``embedding_layers``: lookup tables, whose rows get a gradient only for
the ids in the batch (no row of theirs is "dead").
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

DATA_FACTS = {"class_counts", "target", "binary_targets", "inputs"}  # what a TensorDataset tells
BATCHNORM = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)
RECURRENT = (nn.RNN, nn.LSTM, nn.GRU)
CONVOLUTIONS = (nn.Conv1d, nn.Conv2d, nn.Conv3d)


def run_facts(model: nn.Module, *, task: str, train: Any, loader: DataLoader, val: Any = None,
              ignore_index: int = -100) -> dict[str, Any]:
    facts: dict[str, Any] = {"task": task}
    if hasattr(train, "__len__"):
        facts["train_samples"] = len(train)
    target = train.tensors[1] if isinstance(train, TensorDataset) and len(train.tensors) > 1 else None
    if target is not None and task == "classification" and not target.is_floating_point():
        facts["class_counts"] = class_counts(target, ignore_index)
        held_out = val.tensors[1] if isinstance(val, TensorDataset) and len(val.tensors) > 1 else None
        if held_out is not None and not held_out.is_floating_point():
            facts["val_class_counts"] = class_counts(held_out, ignore_index)
    elif target is not None and target.is_floating_point() and len(target):
        if task == "regression":
            facts["target"] = target_facts(target)
        binary = binary_targets(target)
        if binary is not None:
            facts["binary_targets"] = binary
    inputs = train.tensors[0] if isinstance(train, TensorDataset) and train.tensors else None
    if inputs is not None and inputs.is_floating_point() and inputs.dim() >= 2 and len(inputs):
        facts["inputs"] = input_scale(inputs)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    facts["parameters"] = {"trainable": trainable, "frozen": sum(p.numel() for p in model.parameters()) - trainable}
    facts["batchnorm_layers"] = [name for name, m in model.named_modules() if isinstance(m, BATCHNORM)]
    facts["batch_size"] = loader.batch_size
    if loader.batch_size and not loader.drop_last and "train_samples" in facts:
        facts["last_batch_size"] = facts["train_samples"] % loader.batch_size or loader.batch_size
    facts["input_module"] = next((name for name, m in model.named_modules()
                                  if name and any(True for _ in m.parameters(recurse=False))), None)
    facts["recurrent_layers"] = [name for name, m in model.named_modules() if isinstance(m, RECURRENT)]
    facts["embedding_layers"] = [name for name, m in model.named_modules()
                                 if isinstance(m, (nn.Embedding, nn.EmbeddingBag))]
    narrowest = narrowest_layer(model)
    if narrowest is not None:
        facts["narrowest_layer"] = narrowest
    return facts


def class_counts(target: torch.Tensor, ignore_index: int) -> list[int]:
    labels = target.flatten()
    return torch.bincount(labels[(labels >= 0) & (labels != ignore_index)]).tolist()


def target_facts(target: torch.Tensor) -> dict[str, Any]:
    """The target's moments, and the loss of the best constant per output (a model that ignores
    its input): ``output_variance`` for MSE (the mean over outputs of each output's variance,
    below the pooled variance when outputs differ in scale) and ``abs_deviation`` for L1 (the mean
    absolute deviation from each output's median)."""
    flat = target.reshape(len(target), -1).double()
    facts = {"mean": float(flat.mean()), "variance": float(flat.var(unbiased=False)),
             "min": float(flat.min()), "max": float(flat.max()), "outputs": int(flat.shape[1])}
    facts["output_variance"] = float(f"{float(flat.var(0, unbiased=False).mean()):.6g}")
    facts["abs_deviation"] = float(f"{float((flat - flat.median(0).values).abs().mean()):.6g}")
    return facts


def binary_targets(target: torch.Tensor) -> dict[str, Any] | None:
    """0/1 float targets (multi-label, a binary mask): the positive rate of each output position and
    ``prior_bce``, the binary cross-entropy of always predicting those rates (the best constant)."""
    flat = target.reshape(len(target), -1)
    if not bool(((flat == 0) | (flat == 1)).all()):
        return None
    return binary_summary(flat.double().mean(0))


def binary_summary(rates: torch.Tensor) -> dict[str, Any]:
    """Each output's positive rate -> their mean and the BCE of predicting them (mean binary entropy)."""
    p = rates.double().clamp(1e-12, 1 - 1e-12)
    entropy = -(p * p.log() + (1 - p) * (1 - p).log())
    return {"outputs": int(rates.numel()), "positive_rate": float(f"{float(rates.mean()):.4g}"),
            "prior_bce": float(f"{float(entropy.mean()):.4g}")}


def input_scale(inputs: torch.Tensor) -> dict[str, Any]:
    """Per-feature root mean square, summed in float64 (raw units squared overflow nothing there)
    over chunks of rows, so a large in-memory set is never copied whole."""
    flat = inputs.reshape(len(inputs), -1)
    squares = torch.zeros(flat.shape[1], dtype=torch.float64)
    for start in range(0, len(flat), 4096):
        squares += flat[start:start + 4096].double().pow(2).sum(0)
    return scale_summary((squares / len(flat)).sqrt())


def scale_summary(rms: torch.Tensor) -> dict[str, Any]:
    """Per-feature root mean squares -> the largest (and which), the median, how many."""
    finite = torch.where(torch.isfinite(rms), rms, torch.zeros_like(rms))  # NaN features: another check's
    return {"columns": int(rms.numel()), "rms_max": float(f"{float(finite.max()):.4g}"),
            "rms_max_column": int(finite.argmax()), "rms_median": float(f"{float(finite.median()):.4g}")}


def narrowest_layer(model: nn.Module) -> dict[str, Any] | None:
    # The last Linear or convolution is the output layer (a class per unit, a mask per channel).
    stack = [(name, m.out_features if isinstance(m, nn.Linear) else m.out_channels)
             for name, m in model.named_modules() if isinstance(m, (nn.Linear, *CONVOLUTIONS))][:-1]
    widths = stack + [(name, m.hidden_size) for name, m in model.named_modules() if isinstance(m, RECURRENT)]
    if not widths:
        return None
    name, width = min(widths, key=lambda w: w[1])
    return {"name": name, "width": int(width)}
