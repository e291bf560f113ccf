"""A run judged against the right baseline for its task: what a model that ignores its input scores.

- classification: always predicting the training labels' prior has a cross-entropy equal to the
  prior's entropy ``H = -sum p log p`` (``ln C`` only when the classes are balanced: 0.33 for a
  90/10 set) and an accuracy equal to the majority class's share. A run whose loss settles at H
  learned the prior and nothing from the input (`chance_level`).
- regression: always predicting the target's mean has an MSE equal to the target's variance, so
  ``R^2 = 1 - loss / variance``; a run at R^2 near 0 explains nothing (`predicts_mean`), and a
  target of large scale that the run could not fit was never standardised (`unscaled_target`).

The prior and the target's mean and variance come from ``facts.json`` (the training labels and
targets, read when the run started); without it, a classifier falls back to ``ln C``.
"""

from __future__ import annotations

import math

from torchwise.runs.reader import RunRecord

TASK_LOSS = {"classification": "cross_entropy", "multilabel": "bce", "regression": "mse"}


def loss_kind(record: RunRecord) -> str | None:
    """The form of the loss that ran (``facts.json``'s ``loss``, train/loss_kind.py): cross_entropy,
    bce, mse, l1, or None for a loss whose baseline is not known (the model's own, a contrastive or
    focal loss of yours). Records from before it was kept: the task's own loss unless task.loss is set."""
    loss = record.json_file("facts.json").get("loss")
    if isinstance(loss, dict):
        return loss.get("kind") if isinstance(loss.get("kind"), str) else None
    task = record.config.get("task") or {}
    return None if task.get("loss") else TASK_LOSS.get(task.get("type", "classification"))


def num_classes(record: RunRecord) -> int | None:
    """C from the config, else the built-in model's output width or the class names the run kept."""
    task = record.config.get("task") or {}
    if task.get("type", "classification") != "classification":
        return None
    if isinstance(task.get("num_classes"), int):
        return task["num_classes"]
    counts = record.json_file("facts.json").get("class_counts")
    if isinstance(counts, list) and len(counts) >= 2:
        return len(counts)
    for name, key in (("model.json", "out_features"), ("data_stats.json", "classes")):
        value = record.json_file(name).get(key)
        count = len(value) if isinstance(value, list) else value
        if isinstance(count, int) and count >= 2:
            return count
    return None


def class_prior(record: RunRecord, classes: int) -> list[float]:
    counts = record.json_file("facts.json").get("class_counts")
    if isinstance(counts, list) and counts and all(isinstance(c, int) for c in counts) and sum(counts) > 0:
        counts = counts + [0] * (classes - len(counts))
        return [c / sum(counts) for c in counts]
    return [1 / classes] * classes


def prior_entropy(prior: list[float]) -> float:
    """The cross-entropy of always predicting ``prior``: the classifier's guess loss."""
    return -sum(p * math.log(p) for p in prior if p > 0)


def class_weights(record: RunRecord) -> list[float] | None:
    """The cross-entropy's class weights: the task's (task.class_weights) or your loss module's."""
    loss = record.json_file("facts.json").get("loss") or {}
    weights = loss.get("class_weights") if isinstance(loss, dict) else None
    weights = weights or (record.config.get("task") or {}).get("class_weights")
    return [float(w) for w in weights] if isinstance(weights, list) and weights else None


def guess_distribution(record: RunRecord, classes: int) -> list[float] | None:
    """What the best constant prediction is under the loss that ran: the prior; reweighted by the
    class weights (a weighted mean cross-entropy is the cross-entropy against p_c w_c / sum p w);
    mixed with the uniform by label smoothing (the targets themselves are mixed so). None: both."""
    prior = class_prior(record, classes)
    loss = record.json_file("facts.json").get("loss") or {}
    smoothing = float(loss.get("label_smoothing") or 0.0) if isinstance(loss, dict) else 0.0
    weights = class_weights(record)
    if weights is not None and smoothing:
        return None
    if weights is not None:
        if len(weights) != classes:
            return None
        mass = [p * w for p, w in zip(prior, weights, strict=True)]
        return [m / sum(mass) for m in mass] if sum(mass) > 0 else None
    return [(1 - smoothing) * p + smoothing / classes for p in prior]


def guess_loss(record: RunRecord) -> tuple[str, float] | None:
    """The loss of the best constant output (a model that ignores its input) under the loss that
    ran, with what it is: the entropy of the labels' prior for a cross-entropy, each label's binary
    entropy for a BCE, each output's variance for an MSE, its deviation from the median for an L1;
    None when the loss's form or the training targets are not known."""
    kind, facts = loss_kind(record), record.json_file("facts.json")
    if kind == "cross_entropy":
        classes = num_classes(record)
        guess = guess_distribution(record, classes) if classes is not None else None
        if guess is None:
            return None
        weighted = class_weights(record) is not None
        return (("the entropy of the training labels weighted by the class weights" if weighted else
                 "the entropy of the training labels"), prior_entropy(guess))
    if kind == "bce":
        binary = facts.get("binary_targets") or {}
        if isinstance(binary.get("prior_bce"), (int, float)) and binary["prior_bce"] > 0:
            return "the binary cross-entropy of predicting each label's rate in the training targets", \
                float(binary["prior_bce"])
        return None
    target = facts.get("target") if (record.config.get("task") or {}).get("type") == "regression" else None
    if not isinstance(target, dict):
        return None
    if kind == "mse":
        variance = target.get("output_variance", target.get("variance"))
        shown = "the target's variance" if target.get("outputs", 1) == 1 or "output_variance" not in target \
            else "the target's variance per output"
        return (shown, float(variance)) if isinstance(variance, (int, float)) and variance > 0 else None
    if kind == "l1" and isinstance(target.get("abs_deviation"), (int, float)) and target["abs_deviation"] > 0:
        return "the target's mean absolute deviation from its median", float(target["abs_deviation"])
    return None
