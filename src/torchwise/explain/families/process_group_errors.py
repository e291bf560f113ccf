"""Known errors of forming a process group: the store-based barrier of init_process_group that
counts the processes that joined and compares them with world_size, and (round 8) the rendezvous
store's port taken, in torch before 1.9's words.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known


def _barrier_timeout(match: re.Match[str], text: str) -> Explanation:
    rank, world, joined = match.group(1), int(match.group(2)), int(match.group(3))
    launched_twice = bool(re.search(r"\bsrun\b|mpirun", text)) and bool(
        re.search(r"mp\.spawn|torch\.multiprocessing", text)
    )
    # a file store (init_method='file://...') that outlived an earlier run still holds its count;
    # only the paste's own "File already exists" says so (a --dist-file flag alone does not)
    stale_file = "File already exists" in text
    if joined > world:
        if stale_file:
            why = (
                " The group is formed through a file (init_method='file://...' / a dist file) that"
                " already existed: it still counts the processes of an earlier run."
            )
        elif launched_twice:
            why = (
                " The paste starts several tasks with srun/mpirun and each of them runs"
                " mp.spawn, so every task starts its own set of workers under one store."
            )
        else:
            why = (
                " The processes were started twice (a launcher such as torchrun or srun -n N"
                " around a script that also spawns its workers), or a store left by an earlier"
                " run still counts that run's processes."
            )
        cause = f"More processes joined than world_size: {joined} for {world}." + why
        fix = (
            ("Delete the store file before every run (or give each run a new file name);"
             " then start" if stale_file else "Start")
            + " exactly world_size processes in all: one launcher task per node that spawns"
            " one process per GPU (srun -n1 per node with mp.spawn, or torchrun without spawning"
            " in the script), with world_size = nodes * processes per node"
            + ("." if stale_file else "; with init_method='file://...', delete the file between runs.")
        )
    else:
        cause = (
            f"Only {joined} of {world} processes reached init_process_group within the timeout:"
            " the others crashed before it, were never started (world_size larger than the"
            " processes launched), could not reach the store (MASTER_ADDR/port, firewall), or"
            " reach it much later (long data preparation or model loading before"
            " init_process_group on some ranks)."
        )
        fix = (
            "Check that world_size equals the number of processes started and that every one of"
            " them reaches init_process_group (their own logs); make MASTER_ADDR and MASTER_PORT"
            " reachable from every node; call init_process_group before slow preparation, or"
            " give it a longer timeout (init_process_group(..., timeout=timedelta(hours=1)))."
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


def _address_in_use(match: re.Match[str], text: str) -> Explanation:
    port = fact(text, r"tcp://[\w.-]+:(\d{2,5})\b|MASTER_PORT=(\d{2,5})")
    at = f" {port}" if port else ""
    return answer(
        title=f"The rendezvous port{at} is already in use",
        meaning="Rank 0 starts a TCP store on a port for the ranks to find each other; another process holds it.",
        cause="Another job on this machine uses the same port (torchrun's 29500, or a script's fixed"
        " init_method port), or a process of an earlier run is still alive.",
        fix="Give this run a free port (torchrun --master-port, MASTER_PORT, or the script's init_method"
        f" tcp://localhost:<port>), or find the holder with lsof -i :{port or '<port>'} and stop a leftover.",
    )


# Torch before 1.9 said only "Address already in use": the paste's TCPStore or rendezvous frame
# tells a rendezvous port from any other server's.
RENDEZVOUS = re.compile(r"TCPStore|_tcp_rendezvous|init_process_group")

KNOWN: list[KnownError] = [
    known(
        "process-group-barrier-timeout",
        r"Timed out initializing process group in store based barrier on rank:? (\d+), for key:"
        r" \S+ \(world_size=(\d+), worker_count=(\d+), timeout=[^)]*\)",
        _barrier_timeout,
    ),
    known(
        "port-in-use",
        r"RuntimeError: Address already in use",
        _address_in_use,
        when=lambda match, text: bool(RENDEZVOUS.search(text)),
    ),
]
