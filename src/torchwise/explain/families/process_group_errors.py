"""Known errors of forming a process group: the store-based barrier of init_process_group that
counts the processes that joined and compares them with world_size.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _barrier_timeout(match: re.Match[str], text: str) -> Explanation:
    rank, world, joined = match.group(1), int(match.group(2)), int(match.group(3))
    launched_twice = bool(re.search(r"\bsrun\b|mpirun", text)) and bool(
        re.search(r"mp\.spawn|torch\.multiprocessing", text)
    )
    if joined > world:
        cause = (
            f"More processes joined than world_size: {joined} for {world}."
            + (" The paste starts several tasks with srun/mpirun and each of them runs"
               " mp.spawn, so every task starts its own set of workers under one store."
               if launched_twice else
               " The processes were started twice (a launcher such as torchrun or srun -n N"
               " around a script that also spawns its workers), or a file:// store left by an"
               " earlier run still counts that run's processes.")
        )
        fix = (
            "Start exactly world_size processes in all: one launcher task per node that spawns"
            " one process per GPU (srun -n1 per node with mp.spawn, or torchrun without spawning"
            " in the script), and compute world_size = nodes * processes per node; delete the"
            " store file before a new run when init_method is file://."
        )
    else:
        cause = (
            f"Only {joined} of {world} processes reached init_process_group within the timeout:"
            " the others crashed before it, were never started (world_size larger than the"
            " processes launched), or could not reach the store (MASTER_ADDR/port, firewall)."
        )
        fix = (
            "Check that world_size equals the number of processes started and that every one of"
            " them reaches init_process_group (their own logs); make MASTER_ADDR and MASTER_PORT"
            " reachable from every node."
        )
    return answer(
        title=f"init_process_group timed out: {joined} processes joined a group of {world}",
        meaning=(
            "init_process_group waits on a barrier in the store until world_size processes have"
            f" joined; rank {rank} waited until the timeout and counted {joined}."
        ),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "process-group-barrier-timeout",
        r"Timed out initializing process group in store based barrier on rank:? (\d+), for key:"
        r" \S+ \(world_size=(\d+), worker_count=(\d+), timeout=[^)]*\)",
        _barrier_timeout,
    ),
]
