"""`torchwise tune memory CONFIG`: the bytes of a training step, part by part, and what lowers the peak."""

from __future__ import annotations

from pathlib import Path

from torchwise.cli.tune import CONFIG_ARG, JSON_OPT, OVERRIDES_ARG, RUN_OPT


def command(config: Path = CONFIG_ARG, overrides: list[str] = OVERRIDES_ARG, as_json: bool = JSON_OPT,
            run: Path = RUN_OPT) -> None:
    """Predict the peak memory of a training step at the configured batch size and precision."""
    from rich.console import Group
    from rich.table import Table

    from torchwise.cli.tune import emit, load_workload
    from torchwise.tune.memory import estimate_workload
    from torchwise.tune.units import format_bytes

    work = load_workload(config, overrides)
    estimate = estimate_workload(work)
    table = Table(title=f"memory of one training step: batch {estimate.batch_size}, {estimate.precision}, "
                        f"{estimate.device}")
    table.add_column("part")
    table.add_column("bytes", justify="right")
    table.add_column("how it is counted")
    table.add_row("parameters", format_bytes(estimate.parameters), "weights and buffers, distinct storages")
    table.add_row("gradients", format_bytes(estimate.gradients), "one per trainable parameter")
    table.add_row("optimizer state", format_bytes(estimate.optimizer_state), "after a real step")
    table.add_row("activations", format_bytes(estimate.activations),
                  f"saved for backward, {format_bytes(estimate.activations_per_sample)} per sample")
    table.add_row("input batch", format_bytes(estimate.batch), "")
    phase = {"optimizer": "optimizer step"}.get(estimate.peak_phase, estimate.peak_phase)
    table.add_row("predicted peak", format_bytes(estimate.predicted_peak_bytes),
                  f"during the {phase} (probes of {estimate.probe_sizes[0]} and {estimate.probe_sizes[1]} samples)",
                  style="bold")
    options = Table(title="what would lower the peak")
    for column in ("change", "peak", "saves", "set"):
        options.add_column(column, justify="right" if column in ("peak", "saves") else "left")
    for saving in estimate.savings:
        saved = estimate.predicted_peak_bytes - saving.predicted_peak_bytes
        options.add_row(saving.change, format_bytes(saving.predicted_peak_bytes),
                        format_bytes(saved) if saved > 0 else "nothing", saving.config)
    emit("tune_memory", estimate.to_dict(), as_json=as_json, run_dir=run, table=Group(table, options))
