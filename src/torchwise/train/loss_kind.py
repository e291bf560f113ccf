"""Which loss trained the run, as ``facts.json`` records it for `diagnose`'s baselines.

A baseline (the loss of a model that ignores its input) is known only for a loss whose form is
known: the task's own (cross-entropy, BCE-with-logits, MSE), or one of torch's standard losses
passed as yours (``nn.CrossEntropyLoss()``, ``F.mse_loss``, ...) with a mean reduction. A loss
the model computes itself, or any other function of yours (a contrastive loss, a focal loss), has
no baseline `diagnose` could compute, so it is recorded with ``kind: None`` and the checks that
need one stay silent::

    {"source": "task", "kind": "cross_entropy"}
    {"source": "yours", "kind": "cross_entropy", "class_weights": [1.0, 9.0], "label_smoothing": 0.1}
    {"source": "model", "kind": None}
"""

from __future__ import annotations

from typing import Any

from torch import nn
from torch.nn import functional as F

from torchwise.train.tasks import Task

TASK_LOSS = {"classification": "cross_entropy", "multilabel": "bce", "regression": "mse"}
# NLL on log-probabilities is the cross-entropy of the logits; BCE on probabilities is BCE-with-logits.
MODULES: tuple[tuple[type[nn.Module], str], ...] = (
    (nn.CrossEntropyLoss, "cross_entropy"), (nn.NLLLoss, "cross_entropy"), (nn.MSELoss, "mse"),
    (nn.BCEWithLogitsLoss, "bce"), (nn.BCELoss, "bce"), (nn.L1Loss, "l1"))
FUNCTIONS: dict[Any, str] = {F.cross_entropy: "cross_entropy", F.nll_loss: "cross_entropy", F.mse_loss: "mse",
                             F.binary_cross_entropy_with_logits: "bce", F.binary_cross_entropy: "bce",
                             F.l1_loss: "l1"}


def loss_kind(task: Task, *, model_loss: bool) -> dict[str, Any]:
    """``model_loss``: the model returned its own loss on the first training batch (and no loss
    of yours replaces it)."""
    if model_loss and not task.user_loss:
        return {"source": "model", "kind": None}
    if not task.user_loss:
        return {"source": "task", "kind": TASK_LOSS.get(task.kind)}
    fn = task.loss_fn
    if not isinstance(fn, nn.Module):
        return {"source": "yours", "kind": FUNCTIONS.get(fn)}  # a partial or wrapper: not known
    kind = next((k for cls, k in MODULES if type(fn) is cls), None)
    if kind is None or getattr(fn, "reduction", "mean") != "mean" or getattr(fn, "pos_weight", None) is not None:
        return {"source": "yours", "kind": None}  # a sum, or weighted positives: another baseline
    found: dict[str, Any] = {"source": "yours", "kind": kind}
    weight = getattr(fn, "weight", None)
    if weight is not None:
        if kind != "cross_entropy":
            return {"source": "yours", "kind": None}
        found["class_weights"] = [float(f"{float(w):.6g}") for w in weight.flatten()]
    if getattr(fn, "label_smoothing", 0.0):
        found["label_smoothing"] = float(fn.label_smoothing)
    if isinstance(getattr(fn, "ignore_index", None), int):
        found["ignore_index"] = fn.ignore_index
    return found
