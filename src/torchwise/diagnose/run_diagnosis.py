"""`diagnose`: read a run folder and name what went wrong, with the numbers and the fix.

The checks live in `stops.py` (what stopped the run: a failure, a NaN/inf), `curves.py` (loss
curves), `gradients.py` (per-layer gradient statistics, data wait), `baselines.py` (the loss of a
guess for the task), `learning_rate.py` (the LR the run logged) and `capacity.py` (frozen
parameters, BatchNorm batch size); their thresholds in `thresholds.py`; every code in `codes.py`.
Reads JSON and YAML (``safe_load``) only and imports no user code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchwise.diagnose import thresholds as T
from torchwise.diagnose.at_guess import chance_level, regression_baselines
from torchwise.diagnose.baselines import guess_loss
from torchwise.diagnose.capacity import batchnorm_small_batch, mostly_frozen, too_narrow
from torchwise.diagnose.curves import curve_findings, loss_measures
from torchwise.diagnose.data_checks import unscaled_inputs, val_mismatch
from torchwise.diagnose.gradients import gradient_findings
from torchwise.diagnose.learning_rate import warmup_too_long
from torchwise.diagnose.run_finding import SEVERITY_ORDER, Diagnosis, RunFinding
from torchwise.diagnose.stops import failed, nonfinite
from torchwise.runs.reader import RunRecord, read_run

GENERIC = {"lr_too_low", "underfitting", "chance_level", "predicts_mean"}
SUPERSEDES: dict[str, set[str]] = {
    # A cause the record shows replaces the verdict on the curve's shape that it explains.
    "failed": GENERIC,  # a curve the failure cut short shows no plateau and no settled loss
    "nonfinite": GENERIC,
    "nonfinite_input": GENERIC,
    "warmup_too_long": GENERIC,
    "mostly_frozen": GENERIC,
    "unscaled_target": GENERIC | {"exploding_gradients", "lr_too_high", "data_shift"},
    "batchnorm_small_batch": GENERIC | {"lr_too_high", "exploding_gradients"},
    "data_shift": {"chance_level", "dead_units", "exploding_gradients"},  # the raw inputs caused them
    # a loss that started far above a guess's (the first steps blew up) left the dead and saturated units
    "lr_too_high": {"dead_units", "vanishing_gradients"},
    # a flat loss that vanishing gradients or dead units explain is not the LR's, nor a model too small
    "vanishing_gradients": {"lr_too_low", "underfitting"},
    "dead_units": {"lr_too_low", "underfitting"},
    # raw-unit inputs explain a curve at a guess's loss, steps that overshoot and dead ReLUs
    "unscaled_inputs": GENERIC | {"lr_too_high", "exploding_gradients", "dead_units"},
    "val_mismatch": {"overfitting"},  # a validation curve that never generalised did not drift away
}
EXPLAINED_BEFORE_BASELINE = {"nonfinite", "nonfinite_input", "diverging", "lr_too_low", "vanishing_gradients",
                             "warmup_too_long", "mostly_frozen", "data_shift"}


def diagnose_run(run_dir: Path | str) -> Diagnosis:
    """Read ``run_dir`` and return its findings: what stopped the run first, then worst first.

    >>> import tempfile, json
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "summary.json").write_text(json.dumps({"status": "completed"}))
    >>> diagnose_run(folder).codes()
    ['too_short']
    """
    record = read_run(Path(run_dir))
    measures = loss_measures(record)
    findings = [f for f in (failed(record), nonfinite(record)) if f is not None]
    findings += curve_findings(record, measures)
    findings += gradient_findings(record, codes={f.code for f in findings})
    findings += [f for f in (warmup_too_long(record), mostly_frozen(record, measures),
                             batchnorm_small_batch(record), unscaled_inputs(record, measures),
                             val_mismatch(record)) if f is not None]
    narrow = None if "underfitting" in {f.code for f in findings} else too_narrow(record, measures)
    if narrow is not None:  # the model's shape names the cause: the guess's baseline adds nothing
        findings.append(narrow)
    else:
        baseline = verdict_at_guess(record, measures, codes={f.code for f in findings})
        if baseline is not None:
            findings = [f for f in findings if f.code != "underfitting" or baseline.code == "unscaled_target"]
            findings.append(baseline)
    codes = {f.code for f in findings}
    replaced = set().union(*(SUPERSEDES.get(code, set()) for code in codes))
    guess = guess_loss(record)
    findings = [demoted(f, measures, guess) for f in findings if f.code not in replaced]
    findings.sort(key=lambda f: (f.code != "failed", SEVERITY_ORDER[f.severity]))
    if not any(f.severity in ("warn", "error") for f in findings):
        findings.insert(0, healthy_finding(measures))
    return Diagnosis(run=record.name, findings=findings)


def verdict_at_guess(record: RunRecord, measures: dict[str, Any] | None, *, codes: set[str]) -> RunFinding | None:
    """A run at a guess's loss that nothing found so far explains: the baseline is the verdict. A target
    in raw units the run did not fit is a fact of the data whatever the curve did: its loss spikes
    whenever a batch holds its largest values, which neither the LR nor a change of the data explains."""
    fit = regression_baselines(record, measures)
    if not codes & EXPLAINED_BEFORE_BASELINE:
        return fit or chance_level(record, measures)
    return fit if fit is not None and fit.code == "unscaled_target" else None


def demoted(finding: RunFinding, measures: dict[str, Any] | None, guess: tuple[str, float] | None) -> RunFinding:
    """Dead units in a run that fits are a note, not a fault: the units that stay alive fit the data
    (a healthy autoencoder's code layer measured 62% dead while its loss fell 83%). It fits when its
    loss fell by more than half, or ended under half the loss of a guess (a loss with a high floor,
    a fresh model that starts near the guess, falls less than half and still learns most of what
    can be learned)."""
    if finding.code != "dead_units" or measures is None:
        return finding
    if measures["drop"] >= T.SLOW_DROP:
        finding.severity = "info"
        finding.evidence["train_loss_drop"] = round(measures["drop"], 4)
        finding.why += f"; the training loss still fell {measures['drop']:.0%}, so the units left alive fit the data"
    elif guess is not None and measures["end"] < T.SLOW_DROP * guess[1]:
        finding.severity = "info"
        finding.evidence.update(guess_loss=float(f"{guess[1]:.4g}"), final_train_loss=float(f"{measures['end']:.4g}"))
        finding.why += (f"; the training loss ended at {measures['end']:.4g}, under half {guess[0]} "
                        f"({guess[1]:.4g}), so the units left alive fit the data")
    return finding


def healthy_finding(measures: dict[str, Any] | None) -> RunFinding:
    if measures is None:
        return RunFinding("too_short", "info", "too few logged steps to judge the curves",
                          why="a verdict on a curve needs at least a few points",
                          fix="log more often: log.every_n_steps=1, or train longer", evidence={})
    text = f"the training loss fell from {measures['start']:.4g} to {measures['end']:.4g}"
    if measures.get("val_end") is not None:
        text += f"; validation loss {measures['val_end']:.4g}"
    return RunFinding("healthy", "info", text + "; no problem found", why="no check raised a warning",
                      fix="nothing to fix", evidence=measures)


