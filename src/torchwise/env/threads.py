"""CPU threads: how many torch should use on a machine whose cores others share, and whether
the current setting is what makes a run slow.

torch starts one OpenMP thread per physical core. When other processes keep those cores busy,
every parallel op waits for the threads that did not get a core: on this project's shared 2-core
VM at a load of 4, the digits demo trained in 41 s at torch's default of 2 threads and in 8.9 s
at 1. So `torchwise train` (and `resume`) on the CPU use the cores that the load leaves free,
unless ``OMP_NUM_THREADS`` says otherwise, and `torchwise doctor` says when a setting asks for
more threads than there are free cores.

>>> pick_threads(cores=2, load=1.2, default=2)
1
>>> pick_threads(cores=16, load=0.3, default=8)
8
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from torchwise.env.findings import Finding
from torchwise.env.probe import Facts


def pick_threads(*, cores: int, load: float, default: int) -> int:
    """Threads for the cores the 1-minute load leaves free: at least 1, at most torch's default."""
    free = round(cores - load)
    return max(1, min(default, free))


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):  # not on every platform (Windows)
        return None


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    default: int
    cores: int
    load: float

    def message(self) -> str | None:
        """What the CLI says when it departs from torch's default; None when it does not."""
        if self.threads == self.default:
            return None
        return (f"cpu threads: {self.threads} of torch's {self.default}, since the load ({self.load:.1f} on "
                f"{self.cores} cores) leaves no more free; OMP_NUM_THREADS=N sets it")


def choose_cpu_threads() -> ThreadChoice | None:
    """Set torch's intra-op threads for the free cores; None where the user chose
    (``OMP_NUM_THREADS``) or the load is unknown, and torch's setting stands."""
    import torch

    load, cores = load_average(), os.cpu_count()
    if "OMP_NUM_THREADS" in os.environ or load is None or cores is None:
        return None
    default = torch.get_num_threads()
    threads = pick_threads(cores=cores, load=load, default=default)
    if threads != default:
        torch.set_num_threads(threads)
    return ThreadChoice(threads=threads, default=default, cores=cores, load=load)


def use_free_cores(device: str) -> ThreadChoice | None:
    """`choose_cpu_threads` for a run whose `train.device` resolves to the CPU."""
    from torchwise.train.precision import pick_device

    return choose_cpu_threads() if pick_device(device).type == "cpu" else None


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def check_cpu_threads(facts: Facts) -> Finding:
    threads, cores, load = facts.torch.get_num_threads(), os.cpu_count() or 1, load_average()
    summary = f"torch uses {_count(threads, 'thread')} on {_count(cores, 'core')}"
    if load is None:
        return Finding("cpu-threads", "info", summary + " (load average unknown here)")
    fits = pick_threads(cores=cores, load=load, default=threads)
    free = max(0, round(cores - load))
    summary += f", load {load:.1f} ({'no core' if free == 0 else _count(free, 'core')} free)"
    if threads <= fits:
        return Finding("cpu-threads", "ok", summary)
    if "OMP_NUM_THREADS" not in os.environ:
        return Finding(
            "cpu-threads", "info", summary,
            detail=f"torchwise train uses {_count(fits, 'thread')} while the machine is this busy; a script of "
                   "your own runs at torch's default, whose threads wait for busy cores on every op.",
            fix=f"in your own scripts: torch.set_num_threads({fits}) (or OMP_NUM_THREADS={fits})",
        )
    return Finding(
        "cpu-threads", "warn",
        summary + f": OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']} asks for more threads than that",
        detail="Threads that get no core make every parallel op wait for them: on a shared 2-core VM at "
               "load 4 a CPU training run took 4.6x as long with 2 threads as with 1.",
        fix=f"OMP_NUM_THREADS={fits} (or unset it: torchwise train then picks the thread count from the load)",
    )
