"""`torchwise profile CONFIG`: where a step's time goes, the verdict, and the config key to change."""

from __future__ import annotations

from pathlib import Path

import typer

from torchwise.cli.tune import CONFIG_ARG, JSON_OPT, OVERRIDES_ARG, RUN_OPT


def command(config: Path = CONFIG_ARG, overrides: list[str] = OVERRIDES_ARG, as_json: bool = JSON_OPT,
            run: Path = RUN_OPT,
            steps: int = typer.Option(20, "--steps", help="Timed steps per round (3 rounds, after 5 warm-up steps)."),
            trace: bool = typer.Option(False, "--trace", help="Also write a Chrome trace (torch.profiler) of 3 "
                                                             "steps: runs/CONFIG-profile_trace.json, or in RUN_DIR "
                                                             "with --run."),
            ) -> None:
    """Time each phase of real training steps and say what the run is bound by."""
    from rich.table import Table

    from torchwise.cli.tune import default_output, emit, load_workload
    from torchwise.tune.profile import profile_workload

    work = load_workload(config, overrides)
    path = None
    if trace:
        path = default_output(config, run, "profile_trace.json")
    result = profile_workload(work, steps=steps, trace=path)
    table = Table(title=f"profile: {result.steps} steps of batch {result.batch_size} on {result.device}: "
                        f"{result.verdict}")
    table.add_column("phase")
    table.add_column("ms / step", justify="right")
    table.add_column("share", justify="right")
    for name, ms in result.phases_ms.items():
        table.add_row(name.replace("_", " "), f"{ms:.3f}", f"{ms / result.phase_sum_ms:.0%}")
    table.add_row("sum of phases", f"{result.phase_sum_ms:.3f}", "", style="bold")
    table.add_row("measured step", f"{result.measured_step_ms:.3f}",
                  f"{result.phase_sum_ms / result.measured_step_ms - 1:+.0%}")
    table.add_row("checkpointing", f"{result.checkpoint_ms_per_step:.3f}", "one save spread over its steps")
    table.caption = (f"{result.ops_per_step} ops and {result.host_reads_per_step} host read(s) per step; "
                     f"{result.flops_per_step / 1e6:.3g} MFLOP per step at {result.achieved_flops / 1e9:.3g} GFLOP/s "
                     f"(a large matmul here: {result.attainable_flops / 1e9:.3g} GFLOP/s)\n"
                     f"{result.verdict}: {result.reason}\ntry: {result.recommendation}"
                     + (f"\ntrace: {result.trace}" if result.trace else ""))
    emit("profile", result.to_dict(), as_json=as_json, run_dir=run, table=table)
