"""`diagnose`: read a run folder and name what went wrong, with the numbers and the fix.

The checks live in `curves.py` (loss curves, events) and `gradients.py` (per-layer gradient
statistics, data wait); their thresholds in `thresholds.py`; the finding type in
`run_finding.py`. Reads JSON and YAML (``safe_load``) only and imports no user code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchwise.diagnose.chance import chance_level
from torchwise.diagnose.curves import curve_findings, loss_measures
from torchwise.diagnose.gradients import gradient_findings
from torchwise.diagnose.run_finding import SEVERITY_ORDER, Diagnosis, RunFinding
from torchwise.runs.reader import read_run


def diagnose_run(run_dir: Path | str) -> Diagnosis:
    """Read ``run_dir`` and return its findings, worst first.

    >>> import tempfile, json
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "summary.json").write_text(json.dumps({"status": "completed"}))
    >>> diagnose_run(folder).codes()
    ['too_short']
    """
    record = read_run(Path(run_dir))
    measures = loss_measures(record)
    findings = curve_findings(record, measures)
    findings += gradient_findings(record, codes={f.code for f in findings})
    codes = {f.code for f in findings}
    # A flat loss that vanishing gradients explain is not the LR's fault.
    if "vanishing_gradients" in codes:
        findings = [f for f in findings if f.code != "lr_too_low"]
    # A run at chance level that another finding already explains needs no second verdict.
    if not codes & {"nonfinite", "diverging", "lr_too_low", "vanishing_gradients"}:
        chance = chance_level(record, measures)
        if chance is not None:
            findings = [f for f in findings if f.code != "underfitting"] + [chance]
    findings.sort(key=lambda f: SEVERITY_ORDER[f.severity])
    if not any(f.severity in ("warn", "error") for f in findings):
        findings.insert(0, healthy_finding(measures))
    return Diagnosis(run=record.name, findings=findings)


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


