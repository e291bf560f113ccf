"""`torchwise report SWEEP`: the search on one self-contained HTML page.

The optimisation history, the parameter importances and a parallel-coordinates plot are
Optuna's own matplotlib visualisations, embedded as PNGs in the same page style as a run's
report (runs/report.py): no script, no network, no other file. Then the trial table and the
best trial's config.
"""

from __future__ import annotations

import base64
import io
import warnings
from pathlib import Path
from typing import Any

from torchwise.runs.report import STYLE, esc, table
from torchwise.sweep.record import BEST_CONFIG, read_spec
from torchwise.sweep.storage import open_study
from torchwise.sweep.table import format_value, trial_rows

PLOTS = (("optimisation history", "plot_optimization_history"),
         ("parameter importance", "plot_param_importances"),
         ("parallel coordinates", "plot_parallel_coordinate"))


def plot_image(study: Any, title: str, function: str) -> str:
    """One Optuna matplotlib plot as an <img>, or a line saying why there is none."""
    import matplotlib

    matplotlib.use("Agg")  # headless: no display, no window
    import matplotlib.pyplot as plt
    import optuna.visualization.matplotlib as optuna_plots

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Optuna marks its matplotlib plots experimental
            axes = getattr(optuna_plots, function)(study)
    except (ValueError, RuntimeError, ZeroDivisionError) as err:  # too few complete trials for it
        return f"<p class=info>{esc(title)}: not drawn ({esc(err)})</p>"
    figure = axes.figure if hasattr(axes, "figure") else axes.flat[0].figure
    figure.set_size_inches(7.5, 4.5)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    plt.close(figure)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="{esc(title)}" title="{esc(title)}" src="data:image/png;base64,{data}">'


def sweep_report(sweep_dir: Path) -> str:
    spec = read_spec(sweep_dir)
    study = open_study(url=spec.storage, name=spec.study)
    rows = trial_rows(study, spec)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["state"]] = counts.get(row["state"], 0) + 1
    best = spec.best
    facts = (f"study <b>{esc(spec.study)}</b> · storage {esc(spec.storage)} · sampler {esc(spec.sampler)} · "
             f"pruner {esc(spec.pruner)} · {esc(', '.join(f'{n} {s}' for s, n in sorted(counts.items())))}")
    best_line = (f"<p>best: trial {esc(best['trial'])}, {esc(best['metric'])} {esc(format_value(best['value']))} "
                 f"(run folder {esc(best['run_dir'])})</p>" if best else "<p>no trial completed yet</p>")
    plots = "".join(plot_image(study, title, function) for title, function in PLOTS)
    trial_table = table([[r["trial"], r["state"], *(format_value(r["params"].get(k)) for k in spec.space),
                          format_value(r["value"]), r["evaluations"], r["run_dir"] or "-"] for r in rows],
                        ["trial", "state", *spec.space, f"best {spec.monitor}", "evaluations", "run folder"])
    best_config = sweep_dir / BEST_CONFIG
    config_html = f"<pre>{esc(best_config.read_text())}</pre>" if best_config.is_file() else "<p>none yet</p>"
    space_rows = [[key, ", ".join(f"{k}: {v}" for k, v in entry.items())] for key, entry in spec.space.items()]
    return (f"<h1>sweep {esc(spec.name)}</h1><p class=facts>{facts}</p>{best_line}"
            f"<h2>Search</h2><div class=plots>{plots}</div>"
            f"<h2>Trials</h2>{trial_table}<h2>Space</h2>{table(space_rows, ['key', 'distribution'])}"
            f"<h2>Best config ({esc(BEST_CONFIG)})</h2>{config_html}")


def write_sweep_report(sweep_dir: Path, out: Path | None = None) -> Path:
    """Write the page; default ``SWEEP_DIR/report.html``."""
    sweep_dir = Path(sweep_dir)
    body = sweep_report(sweep_dir)
    page = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>torchwise sweep report: '
            f"{esc(sweep_dir.name)}</title><style>{STYLE}</style></head><body>{body}</body></html>\n")
    target = out or sweep_dir / "report.html"
    target.write_text(page)
    return target
