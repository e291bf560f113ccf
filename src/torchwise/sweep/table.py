"""The sweep's live table (rich): one row per trial with its parameters, best metric and state,
read from the study's storage, so it shows every worker's trials, not only this process's."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from torchwise.sweep.record import read_spec

STATE_STYLE = {"complete": "green", "pruned": "yellow", "running": "cyan", "fail": "red", "waiting": "dim"}


def trial_rows(study: Any, spec: Any) -> list[dict[str, Any]]:
    """One dict per trial: number, state, params (config values), best value so far, run folder."""
    parameters = {p.key: p for p in spec.parameters()}
    maximize = spec.direction == "maximize"
    rows = []
    for trial in study.get_trials(deepcopy=False):
        reported = list(trial.intermediate_values.values())
        value = trial.value if trial.value is not None else (
            (max(reported) if maximize else min(reported)) if reported else None)
        state = trial.state.name.lower()
        if "retry_of" in trial.user_attrs and state == "waiting":
            state = "waiting (retry)"
        rows.append({"trial": trial.number, "state": state, "value": value,
                     "params": {k: parameters[k].value(v) for k, v in trial.params.items() if k in parameters},
                     "evaluations": len(reported), "run_dir": trial.user_attrs.get("run_dir"),
                     "retry_of": trial.user_attrs.get("retry_of")})
    return rows


def render_table(rows: list[dict[str, Any]], spec: Any) -> Any:
    from rich.table import Table
    from rich.text import Text

    done = [r for r in rows if r["state"] in ("complete", "pruned")]
    best = [r["value"] for r in rows if r["state"] == "complete" and r["value"] is not None]
    top = (max(best) if spec.direction == "maximize" else min(best)) if best else None
    title = (f"sweep {spec.name}: {len(done)}/{spec.trials} trials done"
             + (f", best {spec.monitor} {top:.4g}" if top is not None else ""))
    table = Table(title=title, title_justify="left")
    for column in ("trial", "state", *spec.space, f"best {spec.monitor}", "evals"):
        table.add_column(column, no_wrap=True)
    for row in rows:
        value = row["value"]
        mark = " *" if top is not None and value == top and row["state"] == "complete" else ""
        retry = f" (retry of {row['retry_of']})" if row["retry_of"] is not None else ""
        table.add_row(str(row["trial"]), Text(row["state"] + retry, style=STATE_STYLE.get(row["state"], "")),
                      *(format_value(row["params"].get(k)) for k in spec.space),
                      "-" if value is None else f"{value:.4g}{mark}", str(row["evaluations"]))
    return table


def format_value(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class LiveTable:
    """Redraws the table on `refresh` (at most every half second); the last one stays on screen."""

    def __init__(self, sweep_dir: Path) -> None:
        from rich.live import Live

        from torchwise.sweep.storage import open_study

        self.spec = read_spec(sweep_dir)
        self.study = open_study(url=self.spec.storage, name=self.spec.study)
        self._last = 0.0
        self._live = Live(self._render(), auto_refresh=False)
        self._live.start()

    def _render(self) -> Any:
        return render_table(trial_rows(self.study, self.spec), self.spec)

    def refresh(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last > 0.5:
            self._last = now
            self._live.update(self._render(), refresh=True)

    def close(self) -> None:
        self.refresh(force=True)
        self._live.stop()
        if not self._live.console.is_terminal:  # rich ends the last table without a newline there
            self._live.console.line()
