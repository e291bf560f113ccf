"""What a run writes about itself into its folder: the config as used, the data's statistics,
the monitor it settled on, a failure, the closing summary and the diagnosis."""

from __future__ import annotations

import json
import time
from typing import Any

from torchwise.config import RunConfig
from torchwise.errors import ConfigError, TorchwiseError
from torchwise.runs.folder import RunFolder
from torchwise.runs.progress import ProgressView
from torchwise.runs.trust import sign_written
from torchwise.train.context import LoopContext, LoopState


def write_diagnosis(run: RunFolder) -> None:
    """diagnosis.json: what `torchwise diagnose` finds in the finished run (never fails the run)."""
    from torchwise.diagnose.run_diagnosis import diagnose_run

    try:
        run.write_json("diagnosis.json", diagnose_run(run.path).to_json())
    except Exception as err:  # a bug in the diagnosis must not turn a finished run into a crash
        run.log_event("diagnosis_failed", reason=f"{type(err).__name__}: {err}")


def record_config(run: RunFolder, cfg: RunConfig) -> None:
    """Write config.yaml as the run uses it (a choice made while building, such as the monitor,
    goes in too: resume checks it against the checkpoint before building anything) and sign the
    folder as written by this user, so resume/load/predict accept it without asking."""
    run.write_config(cfg.to_yaml_dict())
    sign_written(run.path)


def record_failure(run: RunFolder, state: LoopState, err: TorchwiseError) -> TorchwiseError:
    state.status, state.reason = "failed", err.message
    run.log_event("failed", step=state.step, reason=err.message, hint=err.hint)
    return err


def record_data(run: RunFolder, view: ProgressView, data: Any) -> None:
    """Keep what prediction needs with the run (data_stats.json: standardisation and class names),
    and warn about classes that no training sample has (labels 1..K train K+1 outputs)."""
    stats: dict[str, Any] = {}
    if data.standardizer is not None:
        stats.update(mean=data.standardizer.mean.tolist(), std=data.standardizer.std.tolist())
    if data.classes is not None:
        stats["classes"] = data.classes
    if stats:
        run.write_json("data_stats.json", stats)
    if data.empty_classes:
        shown = ", ".join(map(str, data.empty_classes[:10]))
        run.log_event("empty_classes", classes=data.empty_classes, num_classes=data.num_classes)
        view.message(f"warning: class {shown} of {data.num_classes} has no training sample; if the labels start "
                     "at 1, remap them to 0..K-1 (the model now learns an output that is never right)")


def check_monitor(cfg: RunConfig, run: RunFolder, task: Any, *, has_val: bool) -> None:
    """train.monitor must be a value that an evaluation produces, or no `best` is ever written."""
    if not has_val and cfg.train.monitor == "val_loss":
        run.log_event("monitor_changed", old=cfg.train.monitor, new="train_loss", reason="no validation data")
        cfg.train.monitor = "train_loss"
        record_config(run, cfg)
    produced = ["train_loss", *([f"val_{name}" for name in ("loss", *task.metric_names)] if has_val else [])]
    if cfg.train.monitor not in produced:
        import difflib

        close = difflib.get_close_matches(cfg.train.monitor, produced, n=1)
        why = "" if has_val or not cfg.train.monitor.startswith("val_") else " (there is no validation data)"
        raise ConfigError(f"train.monitor={cfg.train.monitor!r} is not a value this run produces{why}",
                          hint=f"{'did you mean ' + repr(close[0]) + '? ' if close else ''}this run logs "
                               f"{', '.join(produced)}; add a metric with task.metrics (or fit(metrics=...))")


def finish_summary(ctx: LoopContext | None, state: LoopState, *, started: float,
                   samples_before: int = 0) -> dict[str, Any]:
    """The closing summary; speed counts the samples of this process only (after a resume too).

    ``wall_seconds`` here is this process's; the caller replaces it with the run's total.
    """
    wall = time.time() - started
    summary: dict[str, Any] = {"status": state.status, "reason": state.reason, "epochs": state.epoch,
                               "steps": state.step, "samples": state.samples_total,
                               "wall_seconds": round(wall, 3),
                               "samples_per_second": round((state.samples_total - samples_before) / wall, 1)
                               if wall else None,
                               "best": None, "final": {}}
    if ctx is not None:
        tracker = ctx.early_stop
        if tracker.best_step >= 0:
            summary["best"] = {"metric": ctx.cfg.train.monitor, "value": tracker.best,
                               "epoch": tracker.best_epoch, "step": tracker.best_step}
        summary["final"] = dict(ctx.last_metrics)
        summary["nonfinite_skips"] = state.nonfinite_skips
    if state.status == "running":  # left the loop by an exception that was not ours
        summary["status"] = "failed"
    return json.loads(json.dumps(summary, default=str))
