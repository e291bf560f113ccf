"""A run that ended at the loss of a guess (`baselines.guess_loss`): `chance_level` for a
classifier or a multi-label model (cross-entropy or BCE), `predicts_mean` and `unscaled_target`
for a regressor (MSE or L1). Each is read only under the loss whose baseline it quotes."""

from __future__ import annotations

import math
from typing import Any

from torchwise.diagnose import thresholds as T
from torchwise.diagnose.baselines import (
    class_weights,
    guess_distribution,
    guess_loss,
    loss_kind,
    num_classes,
    prior_entropy,
)
from torchwise.diagnose.learning_rate import lr_advice
from torchwise.diagnose.run_finding import RunFinding
from torchwise.runs.reader import RunRecord


def chance_level(record: RunRecord, measures: dict[str, Any] | None) -> RunFinding | None:
    kind, guess = loss_kind(record), guess_loss(record)
    if measures is None or guess is None or kind not in ("cross_entropy", "bce"):
        return None
    entropy = guess[1]
    if entropy <= 0:
        return None
    _, val = record.series("val", "loss")
    memorised = kind != "bce" and memorised_rows(record, measures, [v for v in val if math.isfinite(v)])
    if measures["end"] < (1 - T.PRIOR_LOSS_BAND) * entropy and not memorised:
        return None  # clearly below the guess's loss: the output depends on the input
    if kind == "bce":
        return labels_at_chance(record, measures, guess)
    classes = num_classes(record)
    prior = guess_distribution(record, classes) if classes is not None else None
    if classes is None or prior is None:
        return None
    shares = [c / sum(counts) for c in counts] if (counts := _counts(record, classes)) else prior
    majority = max(shares)
    _, accuracy = record.series("val", "accuracy")
    beaten = majority + T.PRIOR_ACCURACY_MARGIN * (1 - majority) / (classes - 1)
    if accuracy and max(accuracy) >= beaten:
        return None  # it did better than a guess at some point: the model uses its input
    if val and min(val) < (1 - T.PRIOR_LOSS_BAND) * entropy:
        return None  # on data it never trained on it beat the prior clearly: it uses its input (rare classes
        # barely move accuracy, so the validation loss says it where accuracy cannot)
    if not accuracy and not memorised and measures["best"] < (1 - T.PRIOR_LOSS_BAND) * entropy:
        return None
    weighted = class_weights(record) is not None
    balanced = max(shares) - min(shares) < 1e-9 and not weighted and max(prior) - min(prior) < 1e-9
    baseline = (f"ln({classes}) = {entropy:.4g}, the loss of a uniform guess over {classes} classes" if balanced else
                f"{entropy:.4g}, {guess[0]} (the largest class holds {majority:.1%}): the loss of always "
                "predicting that prior")
    shown = (f", and validation accuracy {accuracy[-1]:.1%} (always the largest class: {majority:.1%})"
             if accuracy else "")
    if memorised:
        shown += f"; validation loss never below it (best {min(val):.4g})"
    evidence = {"num_classes": classes, "prior_entropy": round(entropy, 4), "majority_share": round(majority, 4),
                "final_train_loss": round(measures["end"], 4), "first_train_loss": round(measures["first"], 4),
                "final_val_accuracy": round(accuracy[-1], 4) if accuracy else None, "class_weighted": weighted,
                "best_val_loss": min(val) if val else None, "memorised": memorised}
    if measures["first"] > T.EARLY_BLOWUP * entropy:  # (dead units alone would not say it: zero inputs give none)
        why, fix = blown_up(record, measures, entropy)
    else:
        why = ("the output does not depend on the input: it learned how often each class occurs and nothing "
               "else: features that carry no signal about the label (or were zeroed by a broken "
               "normalisation), labels shuffled apart from their inputs, a model that ignores its input, or a "
               "layer too narrow to carry it"
               + ("; with classes this uneven, also a loss that lets the majority win (try "
                  "task.class_weights)" if not balanced and not weighted else "")
               + ("; the training loss went below the guess's only by memorising training rows: on "
                  "validation rows the model never did better than the prior" if memorised else ""))
        fix = ("look at a few samples and their labels; check that one batch can be overfitted "
               "(train.max_steps=200 on 32 samples); `torchwise summary` for a layer that squeezes the "
               "input; `torchwise tune lr` for the learning rate")
    return RunFinding(
        "chance_level", "error",
        f"the model predicts no better than a guess: training loss {measures['end']:.4g} against {baseline}{shown}",
        why=why, fix=fix, evidence=evidence)


def memorised_rows(record: RunRecord, measures: dict[str, Any], val: list[float]) -> bool:
    """A training loss below the guess's (but not below half of it) while the validation loss never went
    below what the training prior scores on the validation labels: the model fitted its training rows,
    not the task (labels joined to the wrong rows let a wide model learn them by heart). The validation
    labels' own counts say what a guess scores there: a split with more of the rare class scores worse
    with the prior alone, and a model that learned a little still beats that."""
    classes = num_classes(record)
    prior = guess_distribution(record, classes) if classes is not None else None
    held_out = record.json_file("facts.json").get("val_class_counts")
    if not val or prior is None or not isinstance(held_out, list) or not held_out or sum(held_out) <= 0:
        return False
    held_out = held_out + [0] * (classes - len(held_out))
    if len(held_out) != classes or any(c and p <= 0 for c, p in zip(held_out, prior, strict=True)):
        return False
    weights = class_weights(record) or [1.0] * classes  # a weighted cross-entropy is a weighted mean
    if len(weights) != classes:
        return False
    mass = [c * w for c, w in zip(held_out, weights, strict=True)]
    guess_on_val = -sum(m * math.log(p) for m, p in zip(mass, prior, strict=True) if m) / sum(mass)
    return measures["end"] >= T.SLOW_DROP * prior_entropy(prior) and min(val) >= guess_on_val


def _counts(record: RunRecord, classes: int) -> list[int] | None:
    counts = record.json_file("facts.json").get("class_counts")
    if isinstance(counts, list) and counts and all(isinstance(c, int) for c in counts) and sum(counts) > 0:
        return counts + [0] * (classes - len(counts))
    return None


def blown_up(record: RunRecord, measures: dict[str, Any], guess: float) -> tuple[str, str]:
    why = (f"the first logged loss was {measures['first']:.3g}, {measures['first'] / guess:.3g}x that of a "
           "guess: the first steps were so large that the loss blew up, and the weights came to rest where "
           "every input gets the same output")
    return why, f"{lr_advice(record, 0.01)}, or run `torchwise tune lr` and take its suggestion; keep clipping on"


def labels_at_chance(record: RunRecord, measures: dict[str, Any], guess: tuple[str, float]) -> RunFinding | None:
    """Multi-label (or a binary mask) under BCE: the loss stayed at that of predicting each label's
    training rate, whatever the input; the validation loss never went below it either."""
    entropy = guess[1]
    if measures["best"] < (1 - T.PRIOR_LOSS_BAND) * entropy:
        return None
    _, val = record.series("val", "loss")
    if val and min(val) < (1 - T.PRIOR_LOSS_BAND) * entropy:
        return None  # it generalised below the guess at some point: the output depends on the input
    binary = record.json_file("facts.json").get("binary_targets") or {}
    rate = binary.get("positive_rate")
    evidence = {"prior_bce": round(entropy, 4), "positive_rate": rate, "outputs": binary.get("outputs"),
                "final_train_loss": round(measures["end"], 4), "best_train_loss": round(measures["best"], 4),
                "first_train_loss": round(measures["first"], 4), "best_val_loss": min(val) if val else None}
    if measures["first"] > T.EARLY_BLOWUP * entropy:
        why, fix = blown_up(record, measures, entropy)
    else:
        why = ("the output does not depend on the input: it learned how often each label is on"
               + (f" ({rate:.1%} of them on average)" if isinstance(rate, (int, float)) else "")
               + " and nothing else: features that carry no signal about the labels, labels shuffled apart "
               "from their inputs or from their columns, a model that ignores its input, or a layer too "
               "narrow to carry it")
        fix = ("look at a few samples and their label vectors; check that one batch can be overfitted "
               "(train.max_steps=200 on 32 samples); `torchwise summary` for a layer that squeezes the input; "
               "`torchwise tune lr` for the learning rate")
    return RunFinding(
        "chance_level", "error",
        f"the model predicts no better than a guess: training loss {measures['end']:.4g} against "
        f"{entropy:.4g}, {guess[0]}", why=why, fix=fix, evidence=evidence)


def regression_baselines(record: RunRecord, measures: dict[str, Any] | None) -> RunFinding | None:
    """`unscaled_target` before `predicts_mean`: a raw-unit target explains a loss at its variance."""
    target = record.json_file("facts.json").get("target")
    guess = guess_loss(record) if loss_kind(record) in ("mse", "l1") else None
    if guess is None and measures is not None and isinstance(target, dict):
        return unscaled_by_mae(record, target, measures)
    if guess is None or measures is None or not isinstance(target, dict):
        return None
    mean, variance, end = float(target["mean"]), float(target["variance"]), measures["end"]
    explained = 1 - end / guess[1]
    mse = loss_kind(record) == "mse"
    score = f"R^2 {explained:.2f}" if mse else f"explaining {explained:.0%} of it"
    evidence = {"target_mean": float(f"{mean:.4g}"), "target_variance": float(f"{variance:.4g}"),
                "target_std": float(f"{math.sqrt(variance):.4g}"), "guess_loss": float(f"{guess[1]:.4g}"),
                "final_train_loss": float(f"{end:.4g}"), "r2_train" if mse else "explained_train": round(explained, 4),
                "val_loss": measures["val_end"]}
    if mean**2 + variance >= T.TARGET_SCALE and explained < T.TARGET_FITTED:
        return unscaled_target(target, evidence, end=end, score=score)
    if explained >= T.EXPLAINED_LITTLE:
        return None
    return RunFinding(
        "predicts_mean", "error",
        f"the model does no better than predicting {'the mean' if mse else 'the median'}: training loss "
        f"{end:.4g} against {guess[0]} {guess[1]:.4g} ({score})",
        why=f"{guess[0]} is the loss of always predicting {'the mean' if mse else 'the median'}, and the run "
            "ended there: the output does not depend on the input in any way that helps: features that carry "
            "no signal about the target, targets shuffled apart from their inputs, or a model too small or "
            "too constrained to represent how they relate",
        fix="check that the features predict the target at all (a linear fit, or their correlation with it); "
            "look at a few samples and their targets; check that one batch can be overfitted "
            "(train.max_steps=200 on 32 samples); then a larger model (`torchwise summary` for its size)",
        evidence=evidence)


def unscaled_by_mae(record: RunRecord, target: dict[str, Any], measures: dict[str, Any]) -> RunFinding | None:
    """A loss whose baseline is not known (a Huber loss of yours): the raw-unit target is still a fact of
    the data, and the validation MAE every regression logs says whether the run fitted it, against the
    MAE of always predicting the median (the target's ``abs_deviation``)."""
    mean, variance, spread = target.get("mean"), target.get("variance"), target.get("abs_deviation")
    _, mae = record.series("val", "mae")
    if not all(isinstance(v, (int, float)) for v in (mean, variance, spread)) or not mae or spread <= 0:
        return None
    explained = 1 - min(mae) / spread
    if mean**2 + variance < T.TARGET_SCALE or explained >= T.TARGET_FITTED:
        return None
    evidence = {"target_mean": float(f"{mean:.4g}"), "target_variance": float(f"{variance:.4g}"),
                "target_std": float(f"{math.sqrt(variance):.4g}"), "best_val_mae": float(f"{min(mae):.4g}"),
                "median_mae": float(f"{spread:.4g}"), "explained_val_mae": round(explained, 4),
                "final_train_loss": float(f"{measures['end']:.4g}"), "val_loss": measures["val_end"]}
    score = f"best validation MAE {min(mae):.4g} against {spread:.4g} for always predicting the median"
    return unscaled_target(target, evidence, end=measures["end"], score=score)


def unscaled_target(target: dict[str, Any], evidence: dict[str, Any], *, end: float, score: str) -> RunFinding:
    mean, variance = float(target["mean"]), float(target["variance"])
    low, high = target.get("min"), target.get("max")
    # A positive target spanning three orders of magnitude or more: its large values own the MSE
    # whatever the scale, and the log is what a model can fit (prices, counts, durations).
    spans = isinstance(low, (int, float)) and isinstance(high, (int, float)) and low > 0 and high >= 1e3 * low
    return RunFinding(
        "unscaled_target", "warn",
        f"the regression target is in raw units (mean {mean:.4g}, variance {variance:.4g}) and the run did "
        f"not fit it: training loss {end:.4g}, {score}",
        why="an output layer starts near 0 and each step moves it by about the LR, so a target in the "
            f"hundreds or more (here mean {mean:.4g}) takes far more steps to reach than the run has; the "
            "loss and the gradients it sends back are huge, so clipping cuts every step"
            + (f"; its values span {low:.4g} to {high:.4g}, so the largest few decide the loss" if spans else ""),
        fix=(f"train on log(y) (its values span {low:.4g} to {high:.4g}; exponentiate predictions back), "
             "standardised, " if spans else "")
            + f"standardise the target with the training set's mean {mean:.4g} and standard deviation "
            f"{math.sqrt(variance):.4g} (train on (y - mean) / std, multiply predictions back), or scale it "
            "to a unit such as thousands; a loss in the target's own units is then the R^2 you read",
        evidence={**evidence, "target_min": low, "target_max": high})
