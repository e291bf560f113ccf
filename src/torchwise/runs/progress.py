"""What the user sees while a run trains: a rich bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol


class ProgressView(Protocol):
    def start_epoch(self, epoch: int, *, epochs: int | None, total_steps: int) -> None: ...
    def update(self, *, steps: int, loss: float, lr: float, samples_per_second: float) -> None: ...
    def end_epoch(self, metrics: dict[str, float]) -> None: ...
    def message(self, text: str) -> None: ...
    def close(self) -> None: ...


def make_progress(mode: str) -> ProgressView:
    """``auto``: a bar when stdout is a terminal, plain lines when it is a file or a pipe."""
    if mode == "auto":
        mode = "bar" if sys.stdout.isatty() else "plain"
    if mode == "bar":
        return BarProgress()
    if mode == "plain":
        return PlainProgress()
    return SilentProgress()


def format_metrics(metrics: dict[str, Any]) -> str:
    return "  ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in metrics.items())


class SilentProgress:
    def start_epoch(self, epoch: int, *, epochs: int | None, total_steps: int) -> None: ...
    def update(self, *, steps: int, loss: float, lr: float, samples_per_second: float) -> None: ...
    def end_epoch(self, metrics: dict[str, float]) -> None: ...
    def message(self, text: str) -> None: ...
    def close(self) -> None: ...


class PlainProgress:
    """One line per epoch, for logs and CI."""

    def __init__(self) -> None:
        self.label = ""

    def start_epoch(self, epoch: int, *, epochs: int | None, total_steps: int) -> None:
        self.label = f"epoch {epoch + 1}" + (f"/{epochs}" if epochs else "")

    def update(self, *, steps: int, loss: float, lr: float, samples_per_second: float) -> None: ...

    def end_epoch(self, metrics: dict[str, float]) -> None:
        print(f"{self.label}  {format_metrics(metrics)}", flush=True)

    def message(self, text: str) -> None:
        print(text, flush=True)

    def close(self) -> None: ...


class BarProgress:
    """A rich bar per epoch (loss, lr, samples/s, ETA), redrawn at most 4 times a second."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]}  lr {task.fields[lr]}  {task.fields[speed]} samples/s"),
            # No refresh thread: it would take the GIL from training 4 times a second. The bar is
            # redrawn from `update`, at most 4 times a second.
            TimeRemainingColumn(), auto_refresh=False, transient=False,
        )
        self.bar.start()
        self.drawn = 0.0
        self.task: Any = None
        self.label = ""

    def start_epoch(self, epoch: int, *, epochs: int | None, total_steps: int) -> None:
        self.label = f"epoch {epoch + 1}" + (f"/{epochs}" if epochs else "")
        self.task = self.bar.add_task(self.label, total=total_steps, loss="-", lr="-", speed="-")
        self.bar.refresh()

    def update(self, *, steps: int, loss: float, lr: float, samples_per_second: float) -> None:
        self.bar.update(self.task, completed=steps, loss=f"{loss:.4g}", lr=f"{lr:.3g}",
                        speed=f"{samples_per_second:,.0f}")
        now = time.monotonic()
        if now - self.drawn >= 0.25:
            self.bar.refresh()
            self.drawn = now

    def end_epoch(self, metrics: dict[str, float]) -> None:
        # A finished epoch leaves one line of results above the live bar, in order.
        self.bar.remove_task(self.task)
        self.bar.console.print(f"{self.label}  {format_metrics(metrics)}")

    def message(self, text: str) -> None:
        self.bar.console.print(text)

    def close(self) -> None:
        self.bar.stop()
