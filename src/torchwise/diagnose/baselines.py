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
from typing import Any

from torchwise.diagnose import thresholds as T
from torchwise.diagnose.learning_rate import lr_advice
from torchwise.diagnose.run_finding import RunFinding
from torchwise.runs.reader import RunRecord


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


def guess_loss(record: RunRecord) -> tuple[str, float] | None:
    """The loss of a model that ignores its input, for the run's task and own loss: ``("prior
    entropy", H)`` for a classifier, ``("target variance", var)`` for an MSE regressor; else None."""
    task, classes = record.config.get("task") or {}, num_classes(record)
    if classes is not None and not task.get("class_weights") and not task.get("loss"):  # the task's own CE
        return "the entropy of the training labels", prior_entropy(class_prior(record, classes))
    target = target_stats(record)
    if target is not None and target["variance"] > 0:
        return "the target's variance", target["variance"]
    return None


def chance_level(record: RunRecord, measures: dict[str, Any] | None) -> RunFinding | None:
    classes = num_classes(record)
    if classes is None or measures is None or (record.config.get("task") or {}).get("class_weights"):
        return None  # class weights change what a guess costs
    prior = class_prior(record, classes)
    entropy = prior_entropy(prior)
    majority = max(prior)
    if entropy <= 0 or measures["end"] < (1 - T.PRIOR_LOSS_BAND) * entropy:
        return None  # clearly below the prior's loss: the output depends on the input
    _, accuracy = record.series("val", "accuracy")
    beaten = majority + T.PRIOR_ACCURACY_MARGIN * (1 - majority) / (classes - 1)
    if accuracy and max(accuracy) >= beaten:
        return None  # it did better than a guess at some point: the model uses its input
    if not accuracy and measures["best"] < (1 - T.PRIOR_LOSS_BAND) * entropy:
        return None
    balanced = max(prior) - min(prior) < 1e-9
    baseline = (f"ln({classes}) = {entropy:.4g}, the loss of a uniform guess over {classes} classes" if balanced else
                f"{entropy:.4g}, the entropy of the training labels (the largest class holds {majority:.1%}): "
                "the loss of always predicting that prior")
    shown = (f", and validation accuracy {accuracy[-1]:.1%} (always the largest class: {majority:.1%})"
             if accuracy else "")
    evidence = {"num_classes": classes, "prior_entropy": round(entropy, 4), "majority_share": round(majority, 4),
                "final_train_loss": round(measures["end"], 4), "first_train_loss": round(measures["first"], 4),
                "final_val_accuracy": round(accuracy[-1], 4) if accuracy else None}
    if measures["first"] > T.EARLY_BLOWUP * entropy:  # (dead units alone would not say it: zero inputs give none)
        why = (f"the first logged loss was {measures['first']:.3g}, {measures['first'] / entropy:.3g}x that of a "
               "guess: the first steps were so large that the loss blew up, and the weights came to rest where "
               "every input gets the same output")
        fix = f"{lr_advice(record, 0.01)}, or run `torchwise tune lr` and take its suggestion; keep clipping on"
    else:
        why = ("the output does not depend on the input: it learned how often each class occurs and nothing "
               "else: features that carry no signal about the label (or were zeroed by a broken "
               "normalisation), labels shuffled apart from their inputs, a model that ignores its input, or a "
               "layer too narrow to carry it"
               + ("; with classes this uneven, also a loss that lets the majority win (try "
                  "task.class_weights)" if not balanced else ""))
        fix = ("look at a few samples and their labels; check that one batch can be overfitted "
               "(train.max_steps=200 on 32 samples); `torchwise summary` for a layer that squeezes the "
               "input; `torchwise tune lr` for the learning rate")
    return RunFinding(
        "chance_level", "error",
        f"the model predicts no better than a guess: training loss {measures['end']:.4g} against {baseline}{shown}",
        why=why, fix=fix, evidence=evidence)


def target_stats(record: RunRecord) -> dict[str, float] | None:
    if (record.config.get("task") or {}).get("type") != "regression" or (record.config.get("task") or {}).get("loss"):
        return None  # the MSE of the mean is the variance only for the task's own MSE loss
    target = record.json_file("facts.json").get("target")
    if not isinstance(target, dict) or not all(isinstance(target.get(k), (int, float)) for k in ("mean", "variance")):
        return None
    return {"mean": float(target["mean"]), "variance": float(target["variance"])}


def regression_baselines(record: RunRecord, measures: dict[str, Any] | None) -> RunFinding | None:
    """`unscaled_target` before `predicts_mean`: a raw-unit target explains a loss at its variance."""
    target = target_stats(record)
    if target is None or measures is None or target["variance"] <= 0:
        return None
    mean, variance, end = target["mean"], target["variance"], measures["end"]
    r2 = 1 - end / variance
    evidence = {"target_mean": float(f"{mean:.4g}"), "target_variance": float(f"{variance:.4g}"),
                "target_std": float(f"{math.sqrt(variance):.4g}"),
                "final_train_loss": float(f"{end:.4g}"), "r2_train": round(r2, 4),
                "val_loss": measures["val_end"]}
    second_moment = mean**2 + variance
    if second_moment >= T.TARGET_SCALE and r2 < T.TARGET_FITTED:
        return RunFinding(
            "unscaled_target", "warn",
            f"the regression target is in raw units (mean {mean:.4g}, variance {variance:.4g}) and the run did "
            f"not fit it: training loss {end:.4g}, R^2 {r2:.2f}",
            why="an output layer starts near 0 and each step moves it by about the LR, so a target in the "
                f"hundreds or more (here mean {mean:.4g}) takes far more steps to reach than the run has; the "
                "loss and the gradients it sends back are huge, so clipping cuts every step",
            fix=f"standardise the target with the training set's mean {mean:.4g} and standard deviation "
                f"{math.sqrt(variance):.4g} (train on (y - mean) / std, multiply predictions back), or scale it "
                "to a unit such as thousands; a loss in the target's own units is then the R^2 you read",
            evidence=evidence)
    if r2 >= T.EXPLAINED_LITTLE:
        return None
    return RunFinding(
        "predicts_mean", "error",
        f"the model does no better than predicting the mean: training loss {end:.4g} against the target's "
        f"variance {variance:.4g} (R^2 {r2:.2f})",
        why="the MSE of always predicting the mean is the target's variance, and the run ended there: the "
            "output does not depend on the input in any way that helps: features that carry no signal about "
            "the target, targets shuffled apart from their inputs, or a model too small or too constrained "
            "to represent how they relate",
        fix="check that the features predict the target at all (a linear fit, or their correlation with it); "
            "look at a few samples and their targets; check that one batch can be overfitted "
            "(train.max_steps=200 on 32 samples); then a larger model (`torchwise summary` for its size)",
        evidence=evidence)
