"""Findings from gradient statistics and step timing: vanishing_gradients, exploding_gradients,
dead_units, data_bound (and lr_too_low from the update/weight ratio when the curve is flat).

The loop writes a ``split: grad_stats`` line every ``log.grad_stats_every`` steps::

    {"step": 50, "split": "grad_stats", "layers": {"body.0": {"grad_norm": 0.41, "update_ratio": 0.0012,
                                                              "dead": 0.0}, ...}}

layers in the model's parameter order (first layer first).
"""

from __future__ import annotations

import statistics
from typing import Any

from torchwise.diagnose import thresholds as T
from torchwise.diagnose.learning_rate import lr_advice
from torchwise.diagnose.run_finding import RunFinding
from torchwise.runs.reader import RunRecord


def grad_stats(record: RunRecord) -> list[dict[str, Any]]:
    """The grad-stats lines, without embedding layers: a lookup table's rows get a gradient only for
    the ids in the batch, so its "dead" rows and its small norm say nothing about saturation (a
    recommender's user table measured 55% of rows without gradient on every logged step)."""
    lookups = set(record.json_file("facts.json").get("embedding_layers") or [])
    lines = [r for r in record.metrics if r.get("split") == "grad_stats" and isinstance(r.get("layers"), dict)]
    if not lookups:
        return lines
    return [{**r, "layers": {k: v for k, v in r["layers"].items() if k not in lookups}} for r in lines]


def gradient_findings(record: RunRecord, *, codes: set[str]) -> list[RunFinding]:
    fading, dead = vanishing(record), dead_units(record)
    if fading is not None and dead is not None and next(iter(fading.evidence["median_grad_norm"])) in \
            dead.evidence["dead_share"]:
        fading = None  # the first layer gets no gradient because its units are dead, not through saturation
    return [f for f in (fading, exploding(record), dead, data_bound(record)) if f is not None]


def median_update_ratio(record: RunRecord) -> float | None:
    """The median over logged grad-stats steps of the median layer's |update| / |weight|."""
    per_step = []
    for line in grad_stats(record):
        ratios = [s.get("update_ratio") for s in line["layers"].values()]
        ratios = [r for r in ratios if isinstance(r, (int, float))]
        if ratios:
            per_step.append(statistics.median(ratios))
    return statistics.median(per_step) if per_step else None


def _median_by_layer(lines: list[dict[str, Any]], key: str) -> dict[str, float]:
    values: dict[str, list[float]] = {}
    for line in lines:
        for layer, stats in line["layers"].items():
            value = stats.get(key)
            if isinstance(value, (int, float)):
                values.setdefault(layer, []).append(float(value))
    return {layer: statistics.median(v) for layer, v in values.items() if v}


def vanishing(record: RunRecord) -> RunFinding | None:
    norms = _median_by_layer(grad_stats(record), "grad_norm")
    if len(norms) < 2:
        return None
    layers = list(norms)
    first, last = norms[layers[0]], norms[layers[-1]]
    if last <= 0 or first / last >= T.VANISHING_RATIO:
        return None
    return RunFinding(
        "vanishing_gradients", "warn",
        f"the first layer's gradients ({layers[0]}: {first:.2g}) are {last / max(first, 1e-30):.2g}x smaller "
        f"than the last layer's ({layers[-1]}: {last:.2g})",
        why="each saturating activation (sigmoid, tanh) multiplies the gradient by less than one on the way "
            "back, so in a deep stack the first layers hardly learn",
        fix="ReLU/GELU activations instead of sigmoid/tanh; normalisation layers (nn.LayerNorm/BatchNorm); "
            "residual connections; Kaiming initialisation; fewer layers",
        evidence={"median_grad_norm": {k: float(f"{v:.3g}") for k, v in norms.items()},
                  "ratio_first_to_last": float(f"{first / last:.3g}"),
                  "steps": [line["step"] for line in grad_stats(record)]})


def exploding(record: RunRecord) -> RunFinding | None:
    steps, norms = record.series("train", "grad_norm")
    if len(norms) < T.MIN_POINTS:
        return through_time(record)
    clip = (record.config.get("train") or {}).get("clip_grad_norm")
    third = max(len(norms) // 3, 1)
    late = statistics.median(norms[-third:])
    growth = late / max(statistics.median(norms[:third]), 1e-30)
    over_clip = bool(clip) and late > T.CLIP_FACTOR * clip
    if not over_clip and growth < T.NORM_GROWTH:
        return through_time(record)  # the overflow can come in one step, after a curve that looked fine
    what = (f"the gradient norm of the last third of the run ({late:.3g}) is {late / clip:.3g}x "
            f"train.clip_grad_norm={clip}: clipping cuts every step" if over_clip else
            f"the gradient norm grew {growth:.3g}x from the first to the last third of the run")
    return RunFinding(
        "exploding_gradients", "warn", what,
        why="large gradients make steps that overshoot; clipping that acts on most steps is silently "
            "rescaling every update, which hides a learning rate or a model that is unstable",
        fix=f"{lr_advice(record, 0.3)}; normalisation layers; "
            "check the loss scale (a sum instead of a mean); keep train.clip_grad_norm on as the safety net",
        evidence={"clip_grad_norm": clip, "late_median_grad_norm": float(f"{late:.3g}"),
                  "growth": float(f"{growth:.3g}"),
                  "median_grad_norm": float(f"{statistics.median(norms):.3g}"), "steps": [steps[0], steps[-1]]})


def dead_units(record: RunRecord) -> RunFinding | None:
    lines = grad_stats(record)[-3:]
    if not lines:
        return None
    dead = {layer: min(float(line["layers"].get(layer, {}).get("dead") or 0.0) for line in lines)
            for layer in lines[-1]["layers"]}
    worst = {k: round(v, 3) for k, v in dead.items() if v > T.DEAD_SHARE}
    if not worst:
        return None
    name, share = max(worst.items(), key=lambda kv: kv[1])
    return RunFinding(
        "dead_units", "warn",
        f"{share:.0%} of {name}'s output units got no gradient at all on the last {len(lines)} logged steps",
        why="a ReLU unit whose input is negative for every sample outputs zero and gets zero gradient: "
            "it is dead and never recovers, usually after a too-large step",
        fix=f"{lr_advice(record, 0.3)}; LeakyReLU/GELU; a smaller init; normalisation before the activation",
        evidence={"dead_share": worst, "steps": [line["step"] for line in lines]})


def data_bound(record: RunRecord) -> RunFinding | None:
    lines = [r for r in record.metrics if r.get("split") == "train"
             and isinstance(r.get("data_wait"), (int, float)) and isinstance(r.get("step_time"), (int, float))]
    lines = lines[1:] if len(lines) > 2 else lines  # the first window includes starting the workers
    total = sum(r["step_time"] for r in lines)
    if not lines or total <= 0:
        return None
    share = sum(r["data_wait"] for r in lines) / total
    if share < T.DATA_WAIT_NOTE:
        return None
    workers = (record.config.get("data") or {}).get("num_workers")
    severity = "warn" if share > T.DATA_BOUND_SHARE else "info"
    return RunFinding(
        "data_bound", severity,
        f"{share:.0%} of the step time was spent waiting for the next batch "
        f"({statistics.median(r['data_wait'] for r in lines) * 1e3:.3g} ms of "
        f"{statistics.median(r['step_time'] for r in lines) * 1e3:.3g} ms per step)",
        why="the model waits for data: the loader, not the accelerator, sets the pace, so a faster model "
            "or a larger GPU would not help",
        fix=f"data.num_workers=4 (now {workers}) or more, up to the CPU cores; data.persistent_workers=true; "
            "cache or pre-decode slow samples in __getitem__",
        evidence={"data_wait_share": round(share, 3), "data_wait_s": round(sum(r["data_wait"] for r in lines), 4),
                  "step_time_s": round(total, 4), "steps": [lines[0]["step"], lines[-1]["step"]]})


def through_time(record: RunRecord) -> RunFinding | None:
    """A NaN/inf with clipping off, first seen in a recurrent layer's output or in the backward pass
    of a model with recurrent layers (finite outputs, finite loss): the gradient through time
    multiplies by the recurrent weights at every step of the sequence and overflowed in one step,
    before the logged norms could show it growing."""
    clip = (record.config.get("train") or {}).get("clip_grad_norm")
    recurrent = record.json_file("facts.json").get("recurrent_layers") or []
    event = next((e for e in record.events if e.get("event") == "nonfinite"), {})
    module = str(event.get("module") or "")
    in_recurrent = any(module == r or module.startswith(f"{r}.") for r in recurrent)
    # every forward output finite and a finite loss: the backward pass overflowed, through time
    in_backward = bool(event) and recurrent and not module and isinstance(event.get("loss"), (int, float))
    if clip or event.get("inputs_finite") is False or not (in_recurrent or in_backward):
        return None
    steps, norms = record.series("train", "grad_norm")
    last = (f"; the last gradient norm logged (step {steps[-1]}) was {norms[-1]:.3g}" if norms else "")
    where = (f"the output of recurrent layer '{module}' went non-finite" if in_recurrent else
             f"the gradient overflowed in the backward pass of a model with recurrent layer(s) "
             f"{', '.join(repr(r) for r in recurrent[:3])} (every forward output finite, loss "
             f"{event.get('loss'):.4g})")
    return RunFinding(
        "exploding_gradients", "warn",
        f"{where} at step {event.get('step')} with gradient clipping off (train.clip_grad_norm is unset){last}",
        why="backpropagation through time multiplies the gradient by the recurrent weights once per time step, "
            "so recurrent weights a little too large grow it geometrically with the sequence length; without "
            "clipping one such step throws the weights far enough that the next forward pass overflows",
        fix="train.clip_grad_norm=1.0 (the standard remedy for recurrent models); an LSTM or GRU instead of "
            "a plain RNN; a smaller recurrent initialisation (orthogonal with gain 1); shorter sequences "
            f"(truncated backpropagation through time); then {lr_advice(record, 0.3)}",
        evidence={"module": module or None, "step": event.get("step"), "clip_grad_norm": clip,
                  "loss_at_overflow": event.get("loss"),
                  "last_grad_norm": norms[-1] if norms else None, "recurrent_layers": recurrent})
