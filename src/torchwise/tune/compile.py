"""`tune compile`: does `torch.compile` pay for this run? Step times, compile time, break-even.

The same batch is stepped eagerly and through ``torch.compile(model)``: the first compiled
step's time less a warm compiled step is the compile time; the warm step times (medians of
``steps`` after warm-up) give the saving per step; compiling pays after
``ceil(compile seconds / saving)`` steps, against the configured run's length
(``train.epochs`` / ``train.max_steps``). The model, optimizer and RNGs are restored after.

A training run compiles in a fresh process, so torch.compile's in-process caches are reset
(`torch.compiler.reset`) before the compiled step: otherwise a second measurement of the same
module class in one process reuses the first one's graphs and reports a compile time near zero.
Inductor's on-disk caches stay, as they do for the run.

>>> break_even(compile_seconds=30.0, eager_step=0.010, compiled_step=0.007)
10000
>>> break_even(compile_seconds=30.0, eager_step=0.010, compiled_step=0.012) is None
True
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any

import torch

from torchwise.tune.workload import Workload


@dataclass
class CompileResult:
    eager_step_ms: float
    compiled_step_ms: float
    compile_seconds: float
    speedup: float  # eager / compiled step time
    break_even_steps: int | None  # None: the compiled step is not faster, so it never pays
    run_steps: int | None  # None: a stream of unknown length without train.max_steps
    pays: bool
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def break_even(*, compile_seconds: float, eager_step: float, compiled_step: float) -> int | None:
    """Steps after which the time saved per step has paid for compiling (None: it never does)."""
    saving = eager_step - compiled_step
    if saving <= 0:
        return None
    return math.ceil(round(compile_seconds / saving, 6))


def run_steps(work: Workload) -> int | None:
    """Optimizer steps the configured run takes, as the loop plans them (None: a stream of unknown
    length trained by epochs)."""
    from torchwise.train.loop import planned_steps
    from torchwise.tune.workload import run_loader

    return planned_steps(work.cfg, run_loader(work, work.cfg.train.batch_size, num_workers=0))


def _time_steps(work: Workload, batch: Any, steps: int) -> list[float]:
    from torchwise.tune.workload import train_step

    times = []
    for _ in range(steps):
        started = time.perf_counter()
        train_step(work, batch)
        if work.device.type == "cuda":
            torch.cuda.synchronize(work.device)
        times.append(time.perf_counter() - started)
    return times


def measure_compile(work: Workload, *, steps: int = 20, warmup: int = 3, batch_size: int | None = None,
                    mode: str | None = None) -> CompileResult:
    """Eager against compiled on a `Workload`; ``mode`` is torch.compile's (e.g. "max-autotune")."""
    from torchwise.tune.state import preserved
    from torchwise.tune.workload import sample_batch

    batch = sample_batch(work, batch_size or work.cfg.train.batch_size)
    torch.compiler.reset()
    compiled_work = dataclasses.replace(work, model=torch.compile(work.model, mode=mode))
    with preserved(work.model, work.optimizer, work.scheduler):
        _time_steps(work, batch, warmup)
        eager = statistics.median(_time_steps(work, batch, steps))
        first = _time_steps(compiled_work, batch, 1)[0]  # compiles forward and backward
        _time_steps(compiled_work, batch, warmup)
        compiled = statistics.median(_time_steps(compiled_work, batch, steps))
    compile_seconds = max(first - compiled, 0.0)
    steps_needed = break_even(compile_seconds=compile_seconds, eager_step=eager, compiled_step=compiled)
    total = run_steps(work)
    pays = steps_needed is not None and total is not None and steps_needed < total
    if steps_needed is None:
        message = (f"compile never pays here: a compiled step ({compiled * 1e3:.3g} ms) is not faster than "
                   f"an eager one ({eager * 1e3:.3g} ms); keep train.compile=false")
    else:
        length = f"{total:,}" if total is not None else "an unknown number (a stream: set train.max_steps)"
        message = (f"compile pays after {steps_needed:,} steps; this run has {length}: "
                   + ("set train.compile=true" if pays else "keep train.compile=false"))
    return CompileResult(eager_step_ms=eager * 1e3, compiled_step_ms=compiled * 1e3, compile_seconds=compile_seconds,
                         speedup=eager / compiled if compiled else math.inf, break_even_steps=steps_needed,
                         run_steps=total, pays=pays, message=message)


def compile_gain(model: torch.nn.Module, data: Any, *, config: Any = None, loss: Any = None,
                 optimizer: Any = None, steps: int = 20,
                 batch_size: int | None = None) -> CompileResult:
    """`tune compile` from Python, on the ``model`` and ``data`` you would give `fit`."""
    from torchwise.tune.workload import from_objects

    work = from_objects(model, data, config=config, loss=loss, optimizer=optimizer)
    return measure_compile(work, steps=steps, batch_size=batch_size)
