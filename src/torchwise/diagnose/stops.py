"""What stopped a run: `failed` (the error, with `torchwise explain`'s answer) and a NaN/inf,
`nonfinite_input` when the batch itself held it, else `nonfinite` (and in which module).

The record says which: summary.json's status and reason, the ``failed`` and ``nonfinite`` events
(the loop re-runs the offending batch, names the first module whose output was not finite and
checks the batch's inputs), and null loss lines.
"""

from __future__ import annotations

from typing import Any

from torchwise.diagnose.learning_rate import lr_advice, lr_evidence
from torchwise.diagnose.run_finding import RunFinding
from torchwise.runs.reader import RunRecord

NONFINITE_REASON = "non-finite"


def _explain(text: str) -> Any:
    """`torchwise explain`'s answer for an error text, or None."""
    from torchwise.explain.lookup import explain

    return explain(text)


def failed(record: RunRecord) -> RunFinding | None:
    """A run whose summary says failed: its error first, whatever the curves before it look like."""
    if record.status != "failed":
        return None
    reason = str(record.summary.get("reason") or "")
    if NONFINITE_REASON in reason:
        return None  # `nonfinite` / `nonfinite_input` say what failed, with the module
    event = next((e for e in reversed(record.events) if e.get("event") == "failed"), {})
    step = record.summary.get("steps", event.get("step"))
    known = _explain(reason) if reason else None
    evidence = {"status": "failed", "step": step, "reason": reason or None, "hint": event.get("hint"),
                "explain": known.to_json() if known else None}
    if known is not None:  # its likely causes (with their general examples) are in evidence.explain
        why, fix = f"`torchwise explain` knows this error: {known.title}. {known.meaning}", known.fix
    else:
        why = ("the run stopped on this error before it finished; the curves up to it say nothing about its "
               "cause" + (f"; the run's own hint: {event['hint']}" if event.get("hint") else ""))
        fix = ("paste the whole traceback into `torchwise explain`; once fixed, `torchwise resume` continues "
               "from checkpoints/last (when checkpoints were on), or train again")
    return RunFinding("failed", "error", f"the run failed at step {step}: {reason or 'no reason recorded'}",
                      why=why, fix=fix, evidence=evidence)


def clipping(record: RunRecord) -> str:
    """Advice on gradient clipping that says what the run had: on (keep it) or off (turn it on)."""
    on = (record.config.get("train") or {}).get("clip_grad_norm")
    return "keep train.clip_grad_norm=1.0" if on else "train.clip_grad_norm=1.0 (this run had no clipping)"


def nonfinite(record: RunRecord) -> RunFinding | None:
    events = [e for e in record.events if e.get("event") in ("nonfinite", "nonfinite_skip")]
    null_steps = [r.get("step") for r in record.metrics if r.get("split") == "train" and r.get("loss") is None]
    reason = str(record.summary.get("reason") or "")
    if not events and not null_steps and NONFINITE_REASON not in reason:
        return None
    first = min([e.get("step", 0) for e in events] + null_steps, default=record.summary.get("steps"))
    named = next((e for e in events if e.get("event") == "nonfinite"), {})
    module = named.get("module")
    evidence = {"first_step": first, "events": len(events), "reason": reason or None, "module": module,
                "inputs_finite": named.get("inputs_finite"), **lr_evidence(record)}
    if named.get("inputs_finite") is False:
        return RunFinding(
            "nonfinite_input", "error",
            f"the batch of step {first} held NaN/inf in its inputs (first non-finite output in module "
            f"'{module}')",
            why="the loop re-ran the batch that broke the step and found NaN or inf in the inputs themselves: "
                "no learning rate turns finite inputs into that, so the data is the cause (missing values in "
                "a column, a corrupt file, a division by a zero std in preprocessing)",
            fix="find the samples: torch.isfinite(x).all() per sample over the dataset; drop or impute them "
                "(fill missing values, skip corrupt files) before training; then train again with the same LR",
            evidence=evidence)
    in_loss = bool(named) and not module and named.get("loss") is None  # finite outputs, non-finite loss
    where = (f"; the first module whose output was not finite: '{module}'" if module else
             "; every module's forward output was finite and the loss was not: the loss computation made it"
             if in_loss else "; every module's forward output was finite, so the backward pass overflowed"
             if named else "")
    evidence["in_loss"] = in_loss
    if in_loss:
        why = ("the loop re-ran the batch: the inputs and every module's output were finite, the loss was not, so "
               "the NaN/inf came from computing the loss: an operation undefined on its input (a log of 0 once a "
               "sigmoid or softmax saturates, a division by a variance that reached 0) or outputs so large that "
               "their square overflows")
        fix = ("compute the loss in its numerically stable form: F.binary_cross_entropy_with_logits or "
               "F.cross_entropy on the logits instead of log(sigmoid(x)) / log(softmax(x)) written by hand, "
               "F.gaussian_nll_loss (it clamps the variance) or a softplus-plus-eps variance, torch.clamp on the "
               f"argument of a log; then {clipping(record)}; if it persists, {lr_advice(record, 0.1)}")
    else:
        why = ("a step too large for the curvature, an fp16 overflow, or an operation that is undefined on its "
               "input (log of 0, sqrt of a negative, division by 0) sends values to infinity; every step after "
               "it is garbage" + (" (the batch's inputs were finite)" if named.get("inputs_finite") else ""))
        recurrent = record.json_file("facts.json").get("recurrent_layers") or []
        look = ("" if not module or any(module == r or module.startswith(f"{r}.") for r in recurrent)
                else f"; look at what {module} computes (a log, sqrt or division)")  # an RNN's output just grows
        fix = f"{lr_advice(record, 0.1)}; {clipping(record)}; train.precision=bf16 or fp32 instead of fp16{look}"
    return RunFinding("nonfinite", "error", f"the loss or gradient became NaN/inf (first at step {first}){where}",
                      why=why, fix=fix, evidence=evidence)
