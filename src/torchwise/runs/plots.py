"""Curves as PNG images (matplotlib, headless), for `runs compare` and `report`.

>>> png = plot_png(Panel("loss", lines=[Line("a", [1, 2, 3], [1.0, 0.5, 0.25])]))
>>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field

from torchwise.runs.reader import RunRecord


@dataclass
class Line:
    label: str
    steps: list[int]
    values: list[float]


@dataclass
class Panel:
    title: str
    ylabel: str = ""
    lines: list[Line] = field(default_factory=list)
    log_y: bool = False

    @property
    def empty(self) -> bool:
        return not any(line.steps for line in self.lines)


def _figure(width: float, height: float):
    import matplotlib

    matplotlib.use("Agg")  # no display needed, and no window opens
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def plain(text: str) -> str:
    """Text from a run folder as matplotlib shows it literally: a ``$`` would start mathtext,
    whose parser raises on what is not valid TeX (a metric named ``$\\frac{``)."""
    return str(text).replace("$", r"\$")


def draw(axes, panel: Panel) -> None:
    """A panel on matplotlib axes: a line per run or split, x = optimizer step, NaN/inf left out."""
    for line in panel.lines:
        finite = [(s, v) for s, v in zip(line.steps, line.values, strict=True) if math.isfinite(v)]
        if finite:
            steps, values = zip(*finite, strict=True)
            axes.plot(steps, values, label=plain(line.label), marker="o" if len(steps) < 30 else None, markersize=3)
    values = [v for line in panel.lines for v in line.values if math.isfinite(v)]
    # A log axis only where the values span a decade or more; a narrow one reads better plain.
    if panel.log_y and values and min(values) > 0 and max(values) / min(values) >= 10:
        axes.set_yscale("log")
    axes.set_title(plain(panel.title))
    axes.set_xlabel("optimizer step")
    axes.set_ylabel(plain(panel.ylabel))
    axes.grid(alpha=0.3)
    if len(panel.lines) > 1:
        axes.legend(fontsize="small")
    if panel.empty:
        axes.text(0.5, 0.5, "not recorded", ha="center", va="center", transform=axes.transAxes, color="gray")


def plot_png(panel: Panel, *, width: float = 6.4, height: float = 3.6) -> bytes:
    """One panel as PNG bytes."""
    figure = _figure(width, height)
    draw(figure.subplots(), panel)
    return _png(figure)


def monitored(record: RunRecord) -> str:
    """The metric that picked the best checkpoint (``val_accuracy``), from the summary or config."""
    best = record.summary.get("best") or {}
    train = record.config.get("train")  # a reader's config is unvalidated data: any type
    return str(best.get("metric") or (train.get("monitor") if isinstance(train, dict) else None) or "val_loss")


def metric_line(record: RunRecord, metric: str, label: str) -> Line:
    """A monitored metric's curve: ``val_x`` from the validation lines, ``train_loss`` per epoch."""
    if metric == "train_loss":
        return Line(label, *record.series("train_epoch", "loss"))
    return Line(label, *record.series("val", metric.removeprefix("val_")))


def compare_panels(records: list[RunRecord]) -> list[Panel]:
    """Training loss, validation loss and each monitored metric, one line per run."""
    panels = [Panel("training loss", "loss", [Line(r.name, *r.series("train", "loss")) for r in records],
                    log_y=True),
              Panel("validation loss", "loss", [Line(r.name, *r.series("val", "loss")) for r in records],
                    log_y=True)]
    for metric in dict.fromkeys(monitored(r) for r in records):
        if metric not in ("val_loss", "train_loss"):
            panels.append(Panel(metric, metric, [metric_line(r, metric, r.name) for r in records]))
    return panels


def compare_png(records: list[RunRecord]) -> bytes:
    """The comparison's panels side by side in one image (what `runs compare` writes)."""
    panels = compare_panels(records)
    figure = _figure(5.0 * len(panels), 3.8)
    for axes, panel in zip(figure.subplots(1, len(panels), squeeze=False)[0], panels, strict=True):
        draw(axes, panel)
    return _png(figure)
