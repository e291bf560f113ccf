"""`torchwise report`: one self-contained HTML page per run, or one for several runs.

Everything is inside the file: the plots are PNGs from matplotlib embedded as base64 ``data:``
URLs, the style is inline, there is no script and no link to the network, so the page opens
anywhere (a laptop offline, an e-mail attachment, a CI artefact). It reads the run folders only
(JSON, YAML ``safe_load``, checkpoint ``meta.json``) and imports none of their code.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from torchwise.runs.ledger import best_text, compare, duration, number, short_time
from torchwise.runs.plots import Line, Panel, compare_panels, metric_line, monitored, plot_png
from torchwise.runs.reader import RunRecord, read_run

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #1d2329; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.2rem; margin-top: 2rem;
     border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; }
.facts { color: #57606a; } table { border-collapse: collapse; margin: .5rem 0; font-size: .9rem; }
td, th { border: 1px solid #d0d7de; padding: .25rem .6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } .plots { display: flex; flex-wrap: wrap; gap: 1rem; }
.plots img { width: 520px; max-width: 100%; border: 1px solid #d0d7de; }
.error { color: #cf222e; font-weight: 600; } .warn { color: #9a6700; font-weight: 600; } .info { color: #57606a; }
pre { background: #f6f8fa; padding: .8rem; overflow-x: auto; font-size: .8rem; }
"""


def esc(value: Any) -> str:
    return html.escape(str(value))


def image(panel: Panel) -> str:
    data = base64.b64encode(plot_png(panel)).decode("ascii")
    return f'<img alt="{esc(panel.title)}" title="{esc(panel.title)}" src="data:image/png;base64,{data}">'


def table(rows: list[list[Any]], header: list[str] | None = None) -> str:
    head = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>" if header else ""
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table>{head}{body}</table>"


def run_panels(record: RunRecord) -> list[Panel]:
    """Loss (train and validation), the monitored metric, LR, gradient norm, throughput, data wait."""
    metric = monitored(record)
    panels = [
        Panel("loss", "loss", [Line("train", *record.series("train", "loss")),
                               Line("validation", *record.series("val", "loss"))], log_y=True),
        Panel(f"monitored: {metric}", metric, [metric_line(record, metric, metric)]),
        Panel("learning rate", "lr", [Line("lr", *record.series("train", "lr"))]),
        Panel("gradient norm (before clipping)", "norm", [Line("grad norm", *record.series("train", "grad_norm"))],
              log_y=True),
        Panel("throughput", "samples/s", [Line("samples/s", *record.series("train", "samples_per_second"))]),
    ]
    steps, waits = record.series("train", "data_wait")
    step_steps, times = record.series("train", "step_time")
    if steps and steps == step_steps:
        shares = [w / t if t else 0.0 for w, t in zip(waits, times, strict=True)]
        panels.append(Panel("share of step time waiting for data", "share", [Line("data wait", steps, shares)]))
    return panels


def diagnosis_html(record: RunRecord) -> str:
    from torchwise.diagnose.run_diagnosis import diagnose_run

    diagnosis = diagnose_run(record.path)
    items = []
    for f in diagnosis.findings:
        evidence = json.dumps(f.evidence, default=str)
        items.append(f'<li><span class="{esc(f.severity)}">{esc(f.severity)} {esc(f.code)}</span>: {esc(f.summary)}'
                     f"<br><small>why: {esc(f.why)}<br>fix: {esc(f.fix)}<br>evidence: {esc(evidence)}</small></li>")
    return f"<ul>{''.join(items)}</ul>"


def checkpoints_html(record: RunRecord) -> str:
    from torchwise.checkpoints.integrity import checkpoint_rows

    rows = [[row.name, row.step if row.step is not None else "-", row.epoch if row.epoch is not None else "-",
             f"{row.size / 1e6:.2f} MB" if row.size is not None else "-", row.state]
            for row in checkpoint_rows(record.path)]
    return table(rows, ["checkpoint", "step", "epochs done", "size", "state"]) if rows else "<p>no checkpoints</p>"


def single_report(record: RunRecord) -> str:
    import yaml

    s = record.summary
    facts = (f"status <b>{esc(record.status)}</b> · started {esc(short_time(s.get('started')))} · "
             f"{esc(s.get('epochs'))} epochs, {esc(s.get('steps'))} steps · {esc(duration(s.get('wall_seconds')))}"
             f" · best {esc(best_text(s.get('best')))}")
    final = [[k, number(v)] for k, v in (s.get("final") or {}).items()]
    env = record.env
    env_rows = [[k, env.get(k)] for k in ("torchwise", "torch", "python", "platform", "device", "gpu", "precision",
                                          "cuda", "git_commit") if env.get(k) is not None]
    plots = "".join(image(p) for p in run_panels(record))
    return (f"<h1>run {esc(record.name)}</h1><p class=facts>{facts}</p>"
            + (f"<p>reason: {esc(s['reason'])}</p>" if s.get("reason") else "")
            + f"<h2>Diagnosis</h2>{diagnosis_html(record)}<h2>Curves</h2><div class=plots>{plots}</div>"
            + f"<h2>Final metrics</h2>{table(final, ['metric', 'value'])}"
            + f"<h2>Checkpoints</h2>{checkpoints_html(record)}"
            + f"<h2>Config</h2><pre>{esc(yaml.safe_dump(record.config, sort_keys=False))}</pre>"
            + f"<h2>Environment</h2>{table(env_rows, ['', ''])}")


def several_report(records: list[RunRecord]) -> str:
    result = compare([r.path for r in records])
    names = [r.name for r in records]
    config_rows = [[key, *(json.dumps(v) for v in values)] for key, values in result["config"].items()]
    metric_rows = [["status", *(r.status for r in records)], ["best", *(best_text(b) for b in result["best"])]]
    metric_rows += [[f"final {m}", *(number(v) for v in values)] for m, values in result["final"].items()]
    plots = "".join(image(p) for p in compare_panels(records))
    return (f"<h1>{len(records)} runs: {esc(', '.join(names))}</h1>"
            + f"<h2>Curves</h2><div class=plots>{plots}</div>"
            + f"<h2>Metrics</h2>{table(metric_rows, ['', *names])}"
            + f"<h2>Config differences</h2>{table(config_rows, ['key', *names]) if config_rows else '<p>none</p>'}")


def write_report(run_dirs: list[Path], out: Path | None = None) -> Path:
    """Write the HTML report; default ``RUN_DIR/report.html`` for one run, ``report.html`` for several."""
    records = [read_run(p) for p in run_dirs]
    body = single_report(records[0]) if len(records) == 1 else several_report(records)
    title = esc(records[0].name if len(records) == 1 else f"{len(records)} runs")
    page = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>torchwise report: {title}</title>'
            f"<style>{STYLE}</style></head><body>{body}</body></html>\n")
    from torchwise.runs.safe_io import write_bytes_atomic

    target = out or (records[0].path / "report.html" if len(records) == 1 else Path("report.html"))
    write_bytes_atomic(target, page.encode())  # a planted report.html link is replaced, not written through
    return target
