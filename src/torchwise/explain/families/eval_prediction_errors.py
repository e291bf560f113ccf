"""Known errors of a compute_metrics that reads a field EvalPrediction does not have.

transformers' Trainer calls ``compute_metrics(p)`` with an ``EvalPrediction`` whose fields are
``predictions``, ``label_ids`` and (with include_inputs_for_metrics) ``inputs``; the message names
the attribute the user's function read, and its closest field is the one meant.
"""

from __future__ import annotations

import difflib
import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

FIELDS = ("predictions", "label_ids", "inputs", "losses")


def _missing_field(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1)
    closest = difflib.get_close_matches(name, FIELDS, n=1, cutoff=0.5)
    meant = closest[0] if closest else "predictions"
    return answer(
        title=f"compute_metrics reads p.{name}; EvalPrediction has {meant}",
        meaning=(
            "The Trainer passes compute_metrics an EvalPrediction with the fields predictions, label_ids"
            f" (and inputs when include_inputs_for_metrics=True); it has no {name}."
        ),
        cause=f"A misspelt or guessed field name in the compute_metrics function: p.{name} for p.{meant}.",
        fix=(
            f"Read p.{meant} (predictions may be a tuple: take predictions[0] for the logits), e.g."
            " logits, labels = p.predictions, p.label_ids."
        ),
    )


KNOWN: list[KnownError] = [
    known("eval-prediction-field", r"['‘’]EvalPrediction['‘’] object has no attribute ['‘’](\w+)['‘’]", _missing_field),
]
