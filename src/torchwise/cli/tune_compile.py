"""`torchwise tune compile CONFIG`: eager against torch.compile, and when compiling pays for itself."""

from __future__ import annotations

from pathlib import Path

import typer

from torchwise.cli.tune import CONFIG_ARG, JSON_OPT, OVERRIDES_ARG, RUN_OPT


def command(config: Path = CONFIG_ARG, overrides: list[str] = OVERRIDES_ARG, as_json: bool = JSON_OPT,
            run: Path = RUN_OPT,
            steps: int = typer.Option(20, "--steps", help="Warm steps timed for each of eager and compiled."),
            mode: str = typer.Option(None, "--mode", help="torch.compile mode, e.g. max-autotune."),
            ) -> None:
    """Time eager and compiled steps and the compile itself; say whether train.compile pays."""
    from rich.table import Table

    from torchwise.cli.tune import emit, load_workload
    from torchwise.tune.compile import measure_compile

    work = load_workload(config, overrides)
    result = measure_compile(work, steps=steps, mode=mode)
    table = Table(title="torch.compile against eager", show_header=False)
    table.add_row("eager step", f"{result.eager_step_ms:.3f} ms")
    table.add_row("compiled step", f"{result.compiled_step_ms:.3f} ms ({result.speedup:.2f}x)")
    table.add_row("compile time", f"{result.compile_seconds:.1f} s")
    table.add_row("break-even", f"{result.break_even_steps:,} steps" if result.break_even_steps else "never")
    steps = f"{result.run_steps:,} steps" if result.run_steps is not None else "unknown (a stream: set train.max_steps)"
    table.add_row("this run", steps)
    table.caption = result.message
    emit("tune_compile", result.to_dict(), as_json=as_json, run_dir=run, table=table)
