"""Findings from a run's loss curves: diverging, data_shift, lr_too_high, lr_too_low, underfitting,
overfitting. Thresholds and the measures they apply to: `thresholds.py`. A NaN/inf or a failure
(`stops.py`) is read first: a curve cut by it says nothing more."""

from __future__ import annotations

import math
import statistics
from typing import Any

from torchwise.diagnose import thresholds as T
from torchwise.diagnose.baselines import guess_loss
from torchwise.diagnose.gradients import median_update_ratio
from torchwise.diagnose.learning_rate import logged_lrs, lr_advice, lr_evidence
from torchwise.diagnose.run_finding import RunFinding
from torchwise.runs.reader import RunRecord


def loss_measures(record: RunRecord) -> dict[str, Any] | None:
    """start, end, drop, roughness, tail_change of the training loss (None: too few lines)."""
    steps, losses = record.series("train", "loss")
    points = [(s, v) for s, v in zip(steps, losses, strict=True) if math.isfinite(v)]
    if len(points) < T.MIN_POINTS:
        return None
    steps, losses = [p[0] for p in points], [p[1] for p in points]
    n = T.EDGE_POINTS
    start, end = statistics.fmean(losses[:n]), statistics.fmean(losses[-n:])
    half = losses[len(losses) // 2:]
    # A jump is measured against the loss it left, but never against less than a twentieth of the
    # start: a loss fitted down to 1% of where it began moves by more than its own size from batch
    # noise alone, which says nothing about the step size (`ROUGH_FLOOR`).
    floor = T.ROUGH_FLOOR * abs(start)
    jumps = [abs(b - a) / max(abs(a), floor) for a, b in zip(half, half[1:], strict=False) if a]
    third = losses[-max(len(losses) // 3, 2):]
    measures: dict[str, Any] = {
        "start": start, "end": end, "best": min(losses), "steps": [steps[0], steps[-1]],
        "drop": (start - end) / start if start > 0 else 0.0,
        "roughness": statistics.median(jumps) if jumps else 0.0,
        "tail_change": (third[-1] - third[0]) / abs(third[0]) if third[0] else 0.0,
        "first": losses[0], "peak": max(losses[1:]), "peak_step": steps[losses.index(max(losses[1:]), 1)],
    }
    _, val = record.series("val", "loss")
    measures["val_end"] = val[-1] if val and math.isfinite(val[-1]) else None
    return measures


def curve_findings(record: RunRecord, measures: dict[str, Any] | None) -> list[RunFinding]:
    """``measures``: `loss_measures` of the run (None: too few lines for a verdict on the curve)."""
    findings: list[RunFinding] = []
    if measures is not None:
        rounded = {k: round(v, 4) if isinstance(v, float) else v for k, v in measures.items()}
        for check in (data_shift, diverging, lr_too_high, lr_too_low, underfitting):
            finding = check(record, measures, rounded)
            if finding is not None:
                findings.append(finding)
                break  # one verdict on the shape of the training curve
    unstable = any(f.code in ("diverging", "lr_too_high", "data_shift") for f in findings)
    finding = None if unstable else overfitting(record)  # a bouncing validation loss proves nothing
    if finding is not None:
        findings.append(finding)
    return findings


def diverging(record: RunRecord, m: dict[str, Any], ev: dict[str, Any]) -> RunFinding | None:
    if m["end"] <= m["start"] * T.DIVERGING_RATIO:
        return None
    return RunFinding(
        "diverging", "error",
        f"the training loss rose from {m['start']:.4g} to {m['end']:.4g} (steps {m['steps'][0]}-{m['steps'][1]})",
        why="the loss ended higher than it started: the steps overshoot the minimum and climb out of it, "
            "the classic sign of a learning rate that is too high",
        fix=f"{lr_advice(record, 0.1)}; keep train.clip_grad_norm=1.0; a warmup (schedule.name=warmup-cosine)",
        evidence={**ev, **lr_evidence(record)})


CHANGE_EVENTS = ("resume", "code_changed", "epoch_restarted", "oom_retry", "init_from")


def data_shift(record: RunRecord, m: dict[str, Any], ev: dict[str, Any]) -> RunFinding | None:
    """A jump of the training loss that the LR does not explain: the LR had been lower before."""
    steps, losses = record.series("train", "loss")
    lr_steps, lrs = logged_lrs(record)
    lr_at = dict(zip(lr_steps, lrs, strict=True))
    guess = guess_loss(record)
    for i in range(3, len(losses)):
        before = statistics.median(losses[i - 3:i])
        # the optimiser was working at these steps: the loss had halved, or gone clearly below a guess's
        # (a binary task starts at ln 2 and a good model ends near half of it)
        settled = min(losses[:i]) <= T.SHIFT_SETTLED * m["start"] or (
            guess is not None and min(losses[:i]) < (1 - T.PRIOR_LOSS_BAND) * guess[1])
        if not (math.isfinite(losses[i]) and before > 0 and losses[i] >= T.SHIFT_JUMP * before and settled):
            continue
        after = [v for v in losses[i:] if math.isfinite(v)]
        if statistics.median(after) < T.SHIFT_STAYS * before:
            continue  # the curve came back: one batch's outliers (a heavy-tailed target), not what it is fed
        lr, peak = lr_at.get(steps[i]), max((lr_at[s] for s in steps[:i] if s in lr_at), default=None)
        if lr is None or peak is None or lr > T.SHIFT_LR_FALLEN * peak:
            return None  # the LR had just risen (or was not logged): a step too large explains it as well
        acc_steps, accuracy = record.series("val", "accuracy")
        acc_before = [a for s, a in zip(acc_steps, accuracy, strict=True) if s <= steps[i - 1]]
        acc_after = [a for s, a in zip(acc_steps, accuracy, strict=True) if s >= steps[i]]
        val = (f"; validation accuracy went from {acc_before[-1]:.1%} to {acc_after[0]:.1%}"
               if acc_before and acc_after else "")
        # What else the record shows changed then (a resume with other code, an OOM retry's smaller pieces).
        changed = sorted({str(e.get("event")) for e in record.events if isinstance(e.get("step"), int)
                          and steps[i - 1] <= e["step"] <= steps[i] and e.get("event") in CHANGE_EVENTS})
        return RunFinding(
            "data_shift", "warn",
            f"the training loss jumped {losses[i] / before:.3g}x at step {steps[i]} ({before:.4g} -> "
            f"{losses[i]:.4g}) while the logged LR was {lr:.3g}, below its earlier {peak:.3g}{val}",
            why=f"the loss had fallen from {m['start']:.4g} to {min(losses[:i]):.4g} at larger steps than this one: "
                "a step size that had worked did not turn too large, so what the model was fed changed: "
                "a shard or cache in other units (raw pixels 0..255, unscaled features), a preprocessing step "
                "that stopped applying, labels from another mapping, or corrupt samples"
                + (f"; the events show {', '.join(changed)} at that point" if changed else ""),
            fix=f"look at the batches from step {steps[i - 1]} to {steps[i]}: compare their inputs' mean and std "
                "and their labels with the earlier batches; fix the data, not the LR",
            evidence={**ev, **lr_evidence(record), "jump_step": steps[i], "loss_before": round(before, 4),
                      "loss_after": round(losses[i], 4), "lr_at_jump": lr, "lr_peak_before": peak,
                      "val_accuracy_before": acc_before[-1] if acc_before else None,
                      "val_accuracy_after": acc_after[0] if acc_after else None, "events_at_jump": changed})
    return None


def lr_too_high(record: RunRecord, m: dict[str, Any], ev: dict[str, Any]) -> RunFinding | None:
    spiked = m["first"] > 0 and m["peak"] > T.SPIKE * m["first"]
    bouncing = m["roughness"] > T.VERY_ROUGH or (m["roughness"] > T.ROUGH and m["drop"] < T.SLOW_DROP)
    guess = guess_loss(record)  # a fresh model starts near a guess's loss: far above it, the first steps blew up
    blown = guess is not None and m["first"] > T.EARLY_BLOWUP * guess[1]
    if not (spiked or bouncing or blown):
        return None
    if blown and not spiked:
        ev = {**ev, "guess_loss": float(f"{guess[1]:.4g}")}
    what = (f"the training loss blew up to {m['peak']:.4g} at step {m['peak_step']}, {m['peak'] / m['first']:.3g}x "
            f"its first logged value {m['first']:.4g}" if spiked else
            f"the first logged training loss was {m['first']:.4g}, {m['first'] / guess[1]:.3g}x {guess[0]} "
            f"({guess[1]:.4g}, the loss of a guess, where a fresh model starts): the first steps blew it up"
            if blown else
            f"the training loss oscillates: it jumps {m['roughness']:.0%} between log lines in the second half "
            f"(steps {m['steps'][0]}-{m['steps'][1]})")
    return RunFinding(
        "lr_too_high", "warn", what,
        why="a learning rate that is too high makes each step jump across the valley instead of down it: "
            "the loss bounces instead of falling",
        fix=f"{lr_advice(record, 0.3)}, or run an LR range test and take a value below the steepest fall",
        evidence={**ev, **lr_evidence(record)})


def lr_too_low(record: RunRecord, m: dict[str, Any], ev: dict[str, Any]) -> RunFinding | None:
    if m["drop"] >= T.FLAT_DROP or m["roughness"] > T.ROUGH:
        return None
    ratio = median_update_ratio(record)
    if ratio is not None and ratio >= T.UPDATE_RATIO_LOW:
        return None  # the weights do move: a flat loss is the model's limit, not the LR's
    ev = {**ev, "median_update_ratio": float(f"{ratio:.3g}") if ratio is not None else None, **lr_evidence(record)}
    return RunFinding(
        "lr_too_low", "warn",
        f"the training loss hardly moved: {m['start']:.4g} -> {m['end']:.4g} ({m['drop']:.1%} lower) "
        f"over steps {m['steps'][0]}-{m['steps'][1]}",
        why="flat from the start with a smooth curve: each step changes the weights too little to matter, "
            "the signature of a learning rate that is too low",
        fix=f"{lr_advice(record, 10.0)}, or run an LR range test; check that the loss matches the task",
        evidence=ev)


def settled_alike(m: dict[str, Any]) -> bool:
    """A plateau (under 5% change over the last third) with validation no worse than 1.2x training."""
    return abs(m["tail_change"]) < T.PLATEAU_CHANGE and (m["val_end"] is None
                                                          or m["val_end"] <= T.UNDERFIT_VAL_GAP * m["end"])


def underfitting(record: RunRecord, m: dict[str, Any], ev: dict[str, Any]) -> RunFinding | None:
    if m["drop"] >= T.SLOW_DROP or not settled_alike(m):
        return None
    guess = guess_loss(record)
    if guess is not None and m["end"] < T.SLOW_DROP * guess[1]:
        return None  # it removed more than half of what a guess leaves: the loss's floor is the data's noise
    return RunFinding(
        "underfitting", "warn",
        f"the loss settled on a high plateau: training {m['end']:.4g} (from {m['start']:.4g})"
        + (f", validation {m['val_end']:.4g}" if m["val_end"] is not None else ""),
        why="training and validation loss stay high alike: the model cannot fit even the training data, "
            "so it is too small, too constrained or not trained long enough",
        fix="a larger model (wider or more layers: model.kwargs.hidden for a built-in MLP); less regularisation "
            "(model.kwargs.dropout=0, optim.weight_decay=0); more steps (train.epochs)",
        evidence=ev)


def overfitting(record: RunRecord) -> RunFinding | None:
    """Validation loss rising for several evaluations in a row while training loss falls."""
    val_steps, val = record.series("val", "loss")
    if len(val) < T.OVERFIT_EVALS + 1 or not all(math.isfinite(v) for v in val):
        return None
    best_index = min(range(len(val)), key=val.__getitem__)
    after = val[best_index:]
    rises = sum(1 for a, b in zip(after, after[1:], strict=False) if b > a)
    if rises < T.OVERFIT_EVALS or val[-1] < T.OVERFIT_RISE * val[best_index]:
        return None
    train_steps, train = record.series("train_epoch", "loss")
    at_best = [v for s, v in zip(train_steps, train, strict=True) if s <= val_steps[best_index]]
    if not at_best or train[-1] >= T.OVERFIT_TRAIN_FALL * at_best[-1]:
        return None  # training loss did not fall meanwhile: not the overfitting pattern
    best_epoch = next((r.get("epoch") for r in record.metrics
                       if r.get("split") == "val" and r.get("step") == val_steps[best_index]), None)
    best = record.summary.get("best") or {}
    holds = best.get("step") == val_steps[best_index]
    checkpoint = (f"checkpoints/best holds it (step {best['step']})" if holds else
                  f"checkpoints/best was picked by {best.get('metric')} at step {best.get('step')}" if best else
                  "no best checkpoint was kept")
    # Early stopping ended the run and `best` holds the best of what it monitored: the remedy was
    # in place (a val_accuracy monitor may keep an epoch before the validation loss's best).
    handled = record.summary.get("status") == "early_stopped" and bool(best)
    stopping = bool((record.config.get("early_stop") or {}).get("enabled"))
    return RunFinding(
        "overfitting", "info" if handled else "warn",
        f"validation loss rose from {val[best_index]:.4g} (epoch {(best_epoch or 0) + 1}, step "
        f"{val_steps[best_index]}) to {val[-1]:.4g} while training loss fell to {train[-1]:.4g}; {checkpoint}",
        why="the model keeps fitting the training set better while doing worse on data it has not seen: "
            "it is memorising the training examples",
        fix=("" if stopping else "early_stop.enabled=true (keeps the best epoch); ")
            + "model.kwargs.dropout=0.2..0.5; optim.weight_decay=0.05; more training data or augmentation; "
            "a smaller model",
        evidence={"best_val_loss": round(val[best_index], 4), "best_step": val_steps[best_index],
                  "best_epoch": best_epoch, "final_val_loss": round(val[-1], 4), "rises_after_best": rises,
                  "train_loss_at_best": round(at_best[-1], 4), "final_train_loss": round(train[-1], 4),
                  "best_checkpoint_holds_it": holds})
