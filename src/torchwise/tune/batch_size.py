"""`tune batch-size`: the largest batch whose training step fits a memory budget.

The search doubles the batch size from 2 until a step does not fit (or the dataset runs out),
then bisects between the last size that fit and the first that did not, so the answer is
exactly the largest size that fits. A size "fits" when a real training step at that size runs:
on CUDA a `torch.OutOfMemoryError` (or a peak over ``budget``) says no; on a CPU, where running
out of memory kills the process instead of raising, `tune memory`'s prediction is the guard and
only sizes predicted to fit are run. The model, optimizer and RNGs are restored afterwards.

>>> search_largest(lambda size: size <= 37, limit=1000)[0]
37
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from torchwise.errors import RunFailed
from torchwise.tune.workload import Workload


@dataclass
class Trial:
    batch_size: int
    fits: bool
    how: str  # "ran", "out of memory", "predicted over budget", "peak over budget"


@dataclass
class BatchSizeResult:
    """The largest fitting size, how it was found, and the micro-batch that keeps the effective batch."""

    batch_size: int
    limit: int
    budget_bytes: int | None
    effective_batch: int  # micro_batch * accumulate: the configured batch_size * accumulate, or just above
    micro_batch: int
    accumulate: int
    trials: list[Trial] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


STREAM_LIMIT = 65_536  # the largest batch tried on a stream without a --limit


def search_largest(fits: Callable[[int], bool], *, limit: int, start: int = 2) -> tuple[int, list[int]]:
    """The largest size in [1, limit] for which ``fits`` holds (0 when none), assuming that a size
    fits whenever a larger one does; returns it and the sizes tried, in order."""
    tried: list[int] = []

    def check(size: int) -> bool:
        tried.append(size)
        return fits(size)

    good, bad = 0, limit + 1
    size = min(start, limit)
    while True:  # doubling
        if check(size):
            good = size
            if size == limit:
                return good, tried
            size = min(size * 2, limit)
        else:
            bad = size
            break
    while bad - good > 1:  # bisection
        middle = (good + bad) // 2
        if check(middle):
            good = middle
        else:
            bad = middle
    return good, tried


def keep_effective(effective: int, largest: int) -> tuple[int, int]:
    """(micro-batch, accumulate) that keep ``effective`` samples per step and fit: an exact divisor
    with at most twice the fewest pieces when there is one, else the fewest pieces of equal size
    (which rounds the effective batch up a little).

    >>> keep_effective(256, 100), keep_effective(100, 30), keep_effective(64, 500), keep_effective(97, 50)
    ((64, 4), (25, 4), (64, 1), (49, 2))
    """
    fewest = math.ceil(effective / largest)
    for accumulate in range(fewest, 2 * fewest + 1):
        if effective % accumulate == 0:
            return effective // accumulate, accumulate
    return math.ceil(effective / fewest), fewest


def default_budget(device: torch.device) -> int:
    """Free memory on a GPU; the available RAM on a CPU."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free + torch.cuda.memory_allocated(device))
    from torchwise.env.system import memory_bytes

    memory = memory_bytes()
    if memory is None:
        raise RunFailed("cannot tell how much memory this machine has",
                        hint="give the budget yourself, e.g. --budget 8GiB")
    total, available = memory
    return int(available if available is not None else total)


def step_fits(work: Workload, budget: int | None, predict: Callable[[int], int] | None) -> Callable[[int], Trial]:
    """A trial function: a real step at each size, guarded by ``predict`` where one is given."""
    from torchwise.tune.workload import sample_batch, train_step

    cuda = work.device.type == "cuda"

    def trial(size: int) -> Trial:
        if predict is not None and budget is not None and predict(size) > budget:
            return Trial(size, False, "predicted over budget")
        try:
            if cuda:
                torch.cuda.reset_peak_memory_stats(work.device)
            train_step(work, sample_batch(work, size))
            if cuda and budget is not None and torch.cuda.max_memory_allocated(work.device) > budget:
                return Trial(size, False, "peak over budget")
            return Trial(size, True, "ran")
        except torch.OutOfMemoryError:
            work.optimizer.zero_grad(set_to_none=True)  # a half-done backward holds memory
            gc.collect()
            if cuda:
                torch.cuda.empty_cache()
            return Trial(size, False, "out of memory")

    return trial


def cpu_guard(work: Workload) -> Callable[[int], int] | None:
    """`tune memory`'s prediction from two probes (2 and 4 samples); None when even those do not fit
    (the real steps then decide alone)."""
    from torchwise.tune.memory import extrapolate, probe

    try:
        probes = probe(work, (2, 4))
    except torch.OutOfMemoryError:
        work.optimizer.zero_grad(set_to_none=True)
        return None
    return lambda size: extrapolate(*probes, size)[0]


def find_largest(work: Workload, *, budget: int | None = None, limit: int | None = None,
                 trial: Callable[[int], Trial] | None = None) -> BatchSizeResult:
    """The search on a `Workload`; ``trial`` replaces the real step (tests inject one)."""
    from torchwise.tune.state import preserved

    size = work.size()
    # A stream has no length to cap the search: its samples wrap around, up to STREAM_LIMIT.
    limit = min(limit or size, size) if size is not None else (limit or STREAM_LIMIT)
    with preserved(work.model, work.optimizer, work.scheduler):
        if trial is None:
            budget = budget if budget is not None else default_budget(work.device)
            predict = None
            if work.device.type != "cuda":
                predict = cpu_guard(work)
            trial = step_fits(work, budget, predict)
        trials: list[Trial] = []

        def fits(size: int) -> bool:
            trials.append(trial(size))
            return trials[-1].fits

        largest, _ = search_largest(fits, limit=limit)
    if largest == 0:
        raise RunFailed("not even a batch of 1 sample fits" + (f" in {budget} bytes" if budget else ""),
                        hint="use a smaller model, train.precision=bf16, or a larger --budget")
    micro, accumulate = keep_effective(work.cfg.train.batch_size * work.cfg.train.accumulate, largest)
    return BatchSizeResult(batch_size=largest, limit=limit, budget_bytes=budget, effective_batch=micro * accumulate,
                           micro_batch=micro, accumulate=accumulate, trials=trials)


def find_batch_size(model: torch.nn.Module, data: Any, *, budget: int | str | None = None,
                    limit: int | None = None, config: Any = None, loss: Any = None,
                    optimizer: Any = None) -> BatchSizeResult:
    """`tune batch-size` from Python; ``budget`` in bytes or as text ("8GiB")."""
    from torchwise.tune.units import parse_size
    from torchwise.tune.workload import from_objects

    work = from_objects(model, data, config=config, loss=loss, optimizer=optimizer)
    budget_bytes = parse_size(budget) if isinstance(budget, str) else budget
    return find_largest(work, budget=budget_bytes, limit=limit)
