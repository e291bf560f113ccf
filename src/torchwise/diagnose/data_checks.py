"""What the data did to a run, from ``facts.json`` and the validation curve: `unscaled_inputs`
(input features in raw units that the run could not fit) and `val_mismatch` (validation data
from another distribution than training: never better than a guess, from the first evaluation
on, while training already was).

Both compare with the loss of a guess for the task (`baselines.guess_loss`): the entropy of the
training labels for a classifier, the target's variance for a regressor.
"""

from __future__ import annotations

import math
from typing import Any

from torchwise.diagnose import thresholds as T
from torchwise.diagnose.baselines import class_prior, guess_loss, num_classes
from torchwise.diagnose.run_finding import RunFinding
from torchwise.runs.reader import RunRecord


def unscaled_inputs(record: RunRecord, measures: dict[str, Any] | None) -> RunFinding | None:
    """A feature whose root mean square is in the hundreds or more, and a run that did not fit."""
    inputs = record.json_file("facts.json").get("inputs")
    if not isinstance(inputs, dict) or not isinstance(inputs.get("rms_max"), (int, float)):
        return None
    rms, column, columns = float(inputs["rms_max"]), inputs.get("rms_max_column"), inputs.get("columns")
    if rms ** 2 < T.INPUT_SCALE:
        return None
    guess = guess_loss(record)
    evidence: dict[str, Any] = {"input_rms_max": rms, "input_rms_max_column": column, "input_columns": columns,
                                "input_rms_median": inputs.get("rms_median")}
    if measures is not None and guess is not None:
        evidence.update(guess_loss=float(f"{guess[1]:.4g}"), final_train_loss=float(f"{measures['end']:.4g}"))
        if measures["end"] < T.INPUTS_FITTED * guess[1]:
            return None  # the model fitted anyway (a CNN on 0..255 pixels with Adam can)
    elif measures is not None:
        return None  # no guess to compare with, and a curve to judge: the curve checks say it
    ended = (f"; the training loss ended at {measures['end']:.4g} against {guess[1]:.4g}, {guess[0]}"
             if measures is not None and guess is not None else "")
    median = inputs.get("rms_median")
    return RunFinding(
        "unscaled_inputs", "warn",
        f"input feature {column} (of {columns}) has a root mean square of {rms:.4g}"
        + (f", the median feature {median:.4g}" if isinstance(median, (int, float)) else "") + ended,
        why="a first layer's weights start at a scale meant for inputs of unit size: a feature in raw units "
            f"(here {rms:.4g}) makes its pre-activations, the loss and the gradients that many times larger, so "
            "one feature dominates every step, steps sized for the others overshoot on it, and ReLUs it "
            "pushes negative die; the learning rate is not the cause",
        fix="standardise the inputs with the training set's mean and std per feature (data.standardize=true, "
            "or a StandardScaler fitted on the training split and applied to every split); divide image "
            "pixels by their maximum (transforms.ToTensor does for 8-bit images)",
        evidence=evidence)


def val_mismatch(record: RunRecord) -> RunFinding | None:
    """Validation never better than a guess, already at its first evaluation, while the training
    loss logged by then was well below the guess: the validation data is not what training saw.
    Overfitting is a model that first generalises and then stops; this one never did."""
    guess = guess_loss(record)
    val_steps, val = record.series("val", "loss")
    train_steps, train = record.series("train", "loss")
    if guess is None or not val or not train or not all(math.isfinite(v) for v in val):
        return None
    before = [(s, v) for s, v in zip(train_steps, train, strict=True) if s <= val_steps[0] and math.isfinite(v)]
    if not before:
        return None
    step, trained = before[-1]
    if min(val) < guess[1]:
        return None
    wrong = systematically_wrong(record)
    if trained >= T.MISMATCH_TRAINED * guess[1] and wrong is None:
        return None
    return RunFinding(
        "val_mismatch", "warn",
        f"validation loss {val[0]:.4g} at its first evaluation (step {val_steps[0]}) and never below "
        f"{guess[1]:.4g}, {guess[0]} (the loss of a guess; best {min(val):.4g}), while the training loss was "
        f"already {trained:.4g} at step {step}"
        + (f"; validation accuracy at most {wrong[0]:.1%}, under half the {wrong[1]:.1%} of always predicting the "
           "largest class" if wrong is not None else ""),
        why="what the model learned on the training data made it no better than a guess on the validation data "
            "from the first evaluation on: overfitting first generalises and then drifts away, this never "
            "generalised at all, so the validation data is not drawn like the training data: preprocessed "
            "differently (a scaler fitted on training but not applied to validation, images inverted or "
            "normalised another way), labels mapped to other ids, or another source",
        fix="compare one batch of each split: per-feature mean and std of the inputs, the label counts, a few "
            "samples side by side; apply the very same transforms to both (fitted on training only); split "
            "one source at random when the two came from different ones",
        evidence={"guess_loss": float(f"{guess[1]:.4g}"), "first_val_loss": val[0], "best_val_loss": min(val),
                  "first_val_step": val_steps[0], "train_loss_before": trained, "train_step_before": step,
                  "best_val_accuracy": wrong[0] if wrong else None, "majority_share": wrong[1] if wrong else None})


def systematically_wrong(record: RunRecord) -> tuple[float, float] | None:
    """(best validation accuracy, majority share) when every validation accuracy was under half what
    always predicting the largest class scores: wrong more often than a guess, which only a model
    that learned something the validation data contradicts manages."""
    classes = num_classes(record)
    _, accuracy = record.series("val", "accuracy")
    if classes is None or not accuracy:
        return None
    majority = max(class_prior(record, classes))
    if max(accuracy) >= T.MISMATCH_WRONG * majority:
        return None
    return max(accuracy), round(majority, 4)
