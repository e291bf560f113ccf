"""The LR the run applied, as it logged it: the advice on the LR quotes it, and `warmup_too_long`.

``optim.lr`` is what the config asked for; the ``lr`` field of each training line of
`metrics.jsonl` is what the step used after warmup, decay or the user's own scheduler. Advice
that says "now X" quotes the logged LR, never the config's: a warmup longer than the run leaves
the logged LR at 7e-6 when optim.lr says 0.03, and a user's scheduler can set 20 when it says 0.05.
"""

from __future__ import annotations

from typing import Any

from torchwise.diagnose import thresholds as T
from torchwise.diagnose.run_finding import RunFinding
from torchwise.runs.reader import RunRecord


def configured_lr(record: RunRecord) -> float | None:
    lr = (record.config.get("optim") or {}).get("lr")
    return float(lr) if isinstance(lr, (int, float)) and not isinstance(lr, bool) else None


def logged_lrs(record: RunRecord) -> tuple[list[int], list[float]]:
    return record.series("train", "lr")


def user_schedule(record: RunRecord) -> bool:
    """The user's scheduler (``schedule.target``, or one passed to fit) set the LR, not optim.lr's schedule."""
    return bool((record.config.get("schedule") or {}).get("target"))


def lr_evidence(record: RunRecord) -> dict[str, Any]:
    steps, lrs = logged_lrs(record)
    if not lrs:
        return {"configured_lr": configured_lr(record)}
    return {"configured_lr": configured_lr(record), "logged_lr_peak": max(lrs), "logged_lr_last": lrs[-1],
            "logged_lr_steps": [steps[0], steps[-1]]}


def lr_advice(record: RunRecord, factor: float) -> str:
    """How to change the LR ``factor``-fold, quoting the LR the run logged (its peak) as "now"."""
    _, lrs = logged_lrs(record)
    configured = configured_lr(record)
    if not lrs:  # nothing logged: the config's value is all the record has
        return (f"optim.lr={configured * factor:.3g} (optim.lr is {configured:.3g}; no LR was logged)" if configured
                else f"an LR {factor:g}x the one used")
    peak = max(lrs)
    if configured and not user_schedule(record) and abs(peak - configured) <= T.LR_MATCH * configured:
        return f"optim.lr={configured * factor:.3g} (now {peak:.2g})"
    who = "your scheduler" if user_schedule(record) else "the schedule or your optimizer"
    return (f"an LR {factor:g}x the one that ran: the logged LR peaked at {peak:.3g}, set by {who}, not by "
            f"optim.lr; have it peak at lr={peak * factor:.3g}")


def warmup_too_long(record: RunRecord) -> RunFinding | None:
    """The logged LR rose the whole run and never came near optim.lr: the warmup outlasted the run."""
    steps, lrs = logged_lrs(record)
    configured = configured_lr(record)
    if len(lrs) < T.MIN_POINTS or not configured or max(lrs) >= T.WARMUP_REACHED * configured:
        return None
    if lrs[-1] <= lrs[0] or any(b < a for a, b in zip(lrs, lrs[1:], strict=False)):
        return None  # not a warmup still climbing: a decay, or a schedule that went down
    schedule = record.config.get("schedule") or {}
    warmup_steps = schedule.get("warmup_steps")
    if not user_schedule(record) and schedule.get("name") == "warmup-cosine" and isinstance(warmup_steps, int):
        fix = (f"schedule.warmup_steps={max(steps[-1] // 20, 1)} (now {warmup_steps}: longer than the "
               f"{steps[-1]} steps the run took), or drop it for schedule.warmup_fraction=0.05")
    else:
        fix = (f"a warmup that ends within the run ({steps[-1]} steps): a few percent of it; "
               f"{'your scheduler' if user_schedule(record) else 'the schedule'} ramps the LR to optim.lr "
               "over more steps than the run has")
    return RunFinding(
        "warmup_too_long", "warn",
        f"the LR never left its warmup: the logged LR rose from {lrs[0]:.3g} to {lrs[-1]:.3g} over steps "
        f"{steps[0]}-{steps[-1]}, against optim.lr={configured:.3g}",
        why=f"the run trained at a {configured / lrs[-1]:.3g}x lower LR than it asked for at its very end, and "
            "lower still before: each step moved the weights too little, whatever optim.lr says",
        fix=fix, evidence={**lr_evidence(record), "warmup_steps": warmup_steps,
                           "ratio_configured_to_last": float(f"{configured / lrs[-1]:.3g}")})
