"""`tune workers`: how many DataLoader workers keep the model fed, without timing every setting.

The candidates are ``num_workers`` 0, 1, 2, 4, ... up to the cores (``max_workers``); the pick
is the smallest one whose loader throughput (samples/s, after the first batch, so worker start-up
is left out as persistent workers leave it out of training) is within 5% of the best. The
search measures the largest candidate first, as the reference, then the next smaller one (when
that falls short, the search is over), then bisects the candidates for
the smallest within 5% of it, assuming more workers never load slower by more than noise; and a
measurement stops as soon as it is slower than 95% of the reference could be. Few workers on a
slow dataset are the costliest to time, and the search times them least. Next to it, the model's
own step throughput on batches already in memory gives the verdict: data-bound when the
loader, even at the pick, delivers fewer samples per second than the model trains on. Both
sides of that comparison are measured again until three measurements in a row agree within 20%
(at most 6 measurements); the spread of those last three is reported, and when either side
stays noisier than that and the two ranges overlap, the verdict is "too noisy to call" rather
than a guess a busy machine could flip.

>>> candidates(6)
[0, 1, 2, 4, 6]
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from torchwise.tune.workload import Workload

WITHIN = 0.95  # "as good as the best": within 5%
AGREE = 3  # measurements in a row that must agree before a verdict is called
MAX_SPREAD = 0.20  # (max - min) / median of those that still agree
MAX_REPEATS = 6  # measurements of one quantity at most
TOO_NOISY = "too noisy to call"


@dataclass
class WorkerTrial:
    num_workers: int
    samples_per_second: float
    batches: int
    seconds: float  # wall time of the measurement, worker start-up included
    complete: bool  # False when stopped early, too slow to be within 5% of the reference


@dataclass
class WorkersResult:
    num_workers: int
    verdict: str  # "data-bound", "compute-bound" or "too noisy to call"
    loader_samples_per_second: float  # the median of the last AGREE measurements at the pick
    step_samples_per_second: float  # likewise for the model's step
    loader_spread: float  # (max - min) / median of those measurements
    step_spread: float
    loader_repeats: int  # measurements taken at the pick, at most MAX_REPEATS
    step_repeats: int
    pin_memory: bool
    persistent_workers: bool
    candidates: list[int]
    search_seconds: float
    trials: list[WorkerTrial] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def candidates(max_workers: int) -> list[int]:
    """0, then powers of two below ``max_workers``, then ``max_workers`` itself."""
    values, power = [0], 1
    while power < max_workers:
        values.append(power)
        power *= 2
    return values + [max_workers] if max_workers > 0 else values


def loader_throughput(work: Workload, num_workers: int, *, batch_size: int, batches: int,
                      give_up_after: float | None = None) -> WorkerTrial:
    """Samples/s of a DataLoader over ``batches`` batches, timed from the first batch's arrival;
    stops once ``give_up_after`` seconds have passed since then."""
    from torchwise.data.batch import count_samples
    from torchwise.tune.workload import run_loader

    # The loader the run builds (whole-batch indexing for tensors), only its worker count varied;
    # the start-up that persistent workers pay once is left out of the speed below.
    loader = run_loader(work, batch_size, num_workers=num_workers, persistent_workers=False)

    started = time.perf_counter()
    first = None
    samples, count, complete = 0, 0, True
    iterator = iter(loader)
    try:
        for batch in iterator:
            now = time.perf_counter()
            count += 1
            if first is None:
                first = now
            else:
                samples += count_samples(batch)
            if count >= batches:
                break
            if give_up_after is not None and now - first > give_up_after:
                complete = False
                break
    finally:
        del iterator  # shuts the workers down
    end = time.perf_counter()
    speed = samples / (end - first) if first is not None and end > first else 0.0
    return WorkerTrial(num_workers=num_workers, samples_per_second=speed, batches=count,
                       seconds=end - started, complete=complete)


def step_throughput(work: Workload, *, batch_size: int, min_steps: int = 3, min_seconds: float = 0.3) -> float:
    """The model's own samples/s on a batch already on the device (after a warm-up step): the
    median step of at least ``min_steps`` steps and ``min_seconds``."""
    from torchwise.tune.state import preserved
    from torchwise.tune.workload import sample_batch, train_step

    batch = sample_batch(work, batch_size)
    times: list[float] = []
    with preserved(work.model, work.optimizer, work.scheduler):
        train_step(work, batch)
        _sync(work.device)
        while len(times) < min_steps or sum(times) < min_seconds:
            started = time.perf_counter()
            train_step(work, batch)
            _sync(work.device)
            times.append(time.perf_counter() - started)
    return batch_size / statistics.median(times)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def spread(values: list[float]) -> float:
    """(max - min) / median: 0.0 when all agree; infinite when the median is 0."""
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle > 0 else float("inf")


def settled(measure: Callable[[], float], *, first: float | None = None) -> list[float]:
    """Values of ``measure()``, measured again until the last AGREE agree within MAX_SPREAD or
    MAX_REPEATS are taken; ``first`` is a measurement already made."""
    values = [] if first is None else [first]
    while len(values) < AGREE or (spread(values[-AGREE:]) > MAX_SPREAD and len(values) < MAX_REPEATS):
        values.append(measure())
    return values


def call(loader: list[float], step: list[float]) -> str:
    """The verdict from the last AGREE measurements of each side; noise only matters where their
    ranges meet."""
    noisy = max(spread(loader), spread(step)) > MAX_SPREAD
    if noisy and min(step) <= max(loader) and min(loader) <= max(step):
        return TOO_NOISY
    return "data-bound" if statistics.median(loader) < statistics.median(step) else "compute-bound"


def search(work: Workload, options: list[int], *, batch_size: int, batches: int,
           measure: Callable[..., WorkerTrial] = loader_throughput) -> list[WorkerTrial]:
    """The reference (most workers) first, then the next fewer, then bisection for the smallest
    within 5% of it."""
    reference = measure(work, options[-1], batch_size=batch_size, batches=batches)
    trials = [reference]
    # Time for the same batches at 95% of the reference's speed: slower than that cannot qualify.
    budget = (batches - 1) * batch_size / max(reference.samples_per_second * WITHIN, 1e-9)
    low, high = 0, len(options) - 1  # options[high] qualifies
    # The neighbour below the reference first: on a data-bound run it falls short, and then (by
    # the same assumption) no fewer workers qualify, so nothing else is timed.
    neighbour = [high - 1] if high > 0 else []
    while low < high:
        middle = neighbour.pop() if neighbour else (low + high) // 2
        trial = measure(work, options[middle], batch_size=batch_size, batches=batches, give_up_after=budget)
        trials.append(trial)
        if trial.complete and trial.samples_per_second >= WITHIN * reference.samples_per_second:
            high = middle
        else:
            low = middle + 1
    return trials


def pick(trials: list[WorkerTrial]) -> WorkerTrial:
    """The fewest workers within 5% of the fastest measured."""
    best = max(t.samples_per_second for t in trials)
    return min((t for t in trials if t.samples_per_second >= WITHIN * best), key=lambda t: t.num_workers)


def tune_loader(work: Workload, *, max_workers: int | None = None, batch_size: int | None = None,
                batches: int = 20, measure_loader: Callable[..., WorkerTrial] = loader_throughput,
                measure_step: Callable[..., float] = step_throughput) -> WorkersResult:
    """The search on a `Workload`; the model and optimizer are restored after the step timing.
    ``measure_loader`` and ``measure_step`` stand in for the timings (tests plant numbers)."""
    batch_size = batch_size or work.cfg.train.batch_size
    options = candidates(max_workers if max_workers is not None else usable_cores())
    started = time.perf_counter()
    trials = search(work, options, batch_size=batch_size, batches=batches, measure=measure_loader)
    chosen = pick(trials)
    loader = settled(lambda: measure_loader(work, chosen.num_workers, batch_size=batch_size,
                                            batches=batches).samples_per_second,
                     first=chosen.samples_per_second)
    step = settled(lambda: measure_step(work, batch_size=batch_size))
    seconds = time.perf_counter() - started
    last_loader, last_step = loader[-AGREE:], step[-AGREE:]
    return WorkersResult(num_workers=chosen.num_workers, verdict=call(last_loader, last_step),
                         loader_samples_per_second=statistics.median(last_loader),
                         step_samples_per_second=statistics.median(last_step),
                         loader_spread=spread(last_loader), step_spread=spread(last_step),
                         loader_repeats=len(loader), step_repeats=len(step),
                         pin_memory=work.device.type == "cuda", persistent_workers=chosen.num_workers > 0,
                         candidates=options, search_seconds=seconds, trials=trials)


def full_grid(work: Workload, *, max_workers: int | None = None, batch_size: int | None = None,
              batches: int = 20) -> list[WorkerTrial]:
    """Every candidate measured in full: what the search avoids (the benchmark compares the two)."""
    batch_size = batch_size or work.cfg.train.batch_size
    options = candidates(max_workers if max_workers is not None else usable_cores())
    return [loader_throughput(work, n, batch_size=batch_size, batches=batches) for n in options]


def tune_workers(model: torch.nn.Module, data: Any, *, config: Any = None, loss: Any = None,
                 max_workers: int | None = None, batch_size: int | None = None, batches: int = 20) -> WorkersResult:
    """`tune workers` from Python, on the ``model`` and ``data`` you would give `fit` (the model
    gives the verdict: its step throughput is what the loader must keep up with)."""
    from torchwise.tune.workload import from_objects

    work = from_objects(model, data, config=config, loss=loss)
    return tune_loader(work, max_workers=max_workers, batch_size=batch_size, batches=batches)
