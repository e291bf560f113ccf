"""`chance_level`: a classifier that ended predicting no better than a guess.

The cross-entropy of a uniform guess over C classes is ``ln(C)`` (2.30 for 10 classes): a run
whose training loss settles there, with a validation accuracy near ``1/C``, has weights whose
output does not depend on the input. It is the "my loss won't go down" of a newcomer, and the
other checks see it only in part (a blow-up in the first log window leaves no spike to see).
"""

from __future__ import annotations

import math
from typing import Any

from torchwise.diagnose import thresholds as T
from torchwise.diagnose.run_finding import RunFinding
from torchwise.runs.reader import RunRecord


def num_classes(record: RunRecord) -> int | None:
    """C from the config, else the built-in model's output width or the class names the run kept."""
    task = record.config.get("task") or {}
    if task.get("type", "classification") != "classification":
        return None
    if isinstance(task.get("num_classes"), int):
        return task["num_classes"]
    for name, key in (("model.json", "out_features"), ("data_stats.json", "classes")):
        value = record.json_file(name).get(key)
        count = len(value) if isinstance(value, list) else value
        if isinstance(count, int) and count >= 2:
            return count
    return None


def chance_level(record: RunRecord, measures: dict[str, Any] | None) -> RunFinding | None:
    classes = num_classes(record)
    if classes is None or measures is None:
        return None
    guess = math.log(classes)
    if abs(measures["end"] - guess) > T.CHANCE_LOSS_BAND * guess:
        return None
    _, accuracy = record.series("val", "accuracy")
    if accuracy and max(accuracy) >= T.CHANCE_ACCURACY / classes:
        return None  # it did better than a guess at some point: the model uses its input
    if not accuracy and measures["best"] < (1 - T.CHANCE_LOSS_BAND) * guess:
        return None
    shown = f", and validation accuracy {accuracy[-1]:.1%} (a guess: {1 / classes:.1%})" if accuracy else ""
    evidence = {"num_classes": classes, "chance_loss": round(guess, 4), "final_train_loss": round(measures["end"], 4),
                "first_train_loss": round(measures["first"], 4),
                "final_val_accuracy": round(accuracy[-1], 4) if accuracy else None}
    lr = (record.config.get("optim") or {}).get("lr")
    lower = f"optim.lr={lr * 0.01:.3g} (now {lr:.3g})" if isinstance(lr, (int, float)) else "a 100x lower optim.lr"
    blew_up = measures["first"] > T.EARLY_BLOWUP * guess
    if blew_up:  # (dead units alone would not say it: inputs of zeros give no gradient either)
        why = (f"the first logged loss was {measures['first']:.3g}, {measures['first'] / guess:.3g}x that of a "
               "guess: the first steps were so large that the loss blew up, and the weights came to rest where "
               "every input gets the same output")
        fix = f"{lower}, or run `torchwise tune lr` and take its suggestion; keep train.clip_grad_norm=1.0"
    else:
        why = ("the output does not depend on the input: labels that do not belong to their inputs (shuffled "
               "apart), inputs that are constant or all zero after a broken normalisation, a model that "
               "ignores its input, or a layer too narrow to carry it")
        fix = ("look at a few samples and their labels; check that one batch can be overfitted "
               "(train.max_steps=200 on 32 samples); `torchwise summary` for a layer that squeezes the "
               "input; `torchwise tune lr` for the learning rate")
    return RunFinding(
        "chance_level", "error",
        f"the model predicts no better than a guess: training loss {measures['end']:.4g} against ln({classes}) = "
        f"{guess:.4g}, the loss of a uniform guess over {classes} classes{shown}",
        why=why, fix=fix, evidence=evidence)
