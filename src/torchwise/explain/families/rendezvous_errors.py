"""Known errors of a torch.distributed rendezvous that was given no rank or world size.

``init_process_group`` learns each process's rank and the world size from the environment
(``env://``: RANK, WORLD_SIZE, set by a launcher) or from its own arguments (``file://`` and
``tcp://``: ``rank=``, ``world_size=``). Each release words the missing value its own way: torch 0.4's
THD "rank is not set but it is required for env:// init method", later "Error initializing
torch.distributed using file:// rendezvous: rank parameter missing". The init method in the message
says where the value should have come from. (``env://`` with a named variable and ``tcp://`` are read
by ``distributed-env-missing``.)
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.families.distributed_errors import _no_process_group

LAUNCHER = (
    "Start it with the launcher: torchrun --nproc-per-node N script.py (python -m"
    " torch.distributed.launch in old torch), one process per GPU, even for one GPU where the code"
    " only supports its distributed path; or set the variables yourself for one process"
    " (RANK=0 WORLD_SIZE=1 MASTER_ADDR=localhost MASTER_PORT=29500)."
)


def _missing(match: re.Match[str], text: str) -> Explanation:
    value = (match.group(1) or match.group(4)).replace("_", " ")
    method = (match.group(2) or match.group(3)).lower()
    if method == "env":
        return answer(
            title=f"init_process_group('env://') found no {value}: the script was not started by a launcher",
            meaning=(
                "The env:// rendezvous reads RANK and WORLD_SIZE (and MASTER_ADDR/MASTER_PORT) from the"
                f" environment, which the launcher sets for each process; {value} is not set."
            ),
            cause=(
                "A script written for distributed training was run with plain python (or from an"
                " IDE), so no launcher set the variables; setting rank=0 in the script's own options"
                " does not reach the environment."
            ),
            fix=LAUNCHER,
        )
    return answer(
        title=f"init_process_group('{method}://...') was given no {value}",
        meaning=(
            f"A {method}:// rendezvous does not read the environment: rank and world_size must be"
            f" passed to init_process_group, and {value} was None."
        ),
        cause=(
            "The script does not pass the process's rank (and world size) to init_process_group:"
            " code written for torch 0.4, whose file:// rendezvous assigned ranks itself, or a"
            " rank option left unset when the processes were started by hand."
        ),
        fix=(
            "Pass both to every process: init_process_group(backend, init_method=...,"
            " rank=<this process's index 0..N-1>, world_size=N) (give each process its own --rank),"
            " or start with torchrun and init_method='env://'; or run with the torch release the"
            " code was written for."
        ),
    )


def _address_in_use(match: re.Match[str], text: str) -> Explanation:
    port = re.search(r"tcp://[\w.\-]+:(\d{2,5})|MASTER_PORT=(\d{2,5})|--master[-_]port[= ](\d{2,5})", text)
    named = next((group for group in port.groups() if group), None) if port else None
    at = f" {named}" if named else ""
    return answer(
        title=f"The rendezvous port{at} is already in use",
        meaning=(
            "Rank 0 starts the TCP store of init_process_group on the rendezvous address's port (the"
            " init_method tcp://host:port, or MASTER_PORT), and another process already listens there."
        ),
        cause=(
            "A second job on the machine uses the same (default) port, or a process of an earlier run"
            " is still alive and holds it."
        ),
        fix=(
            "Give this run a free port: the script's init method (--init_method tcp://localhost:<port>,"
            " --dist-url), MASTER_PORT=<port>, or torchrun --master-port <port> (torchrun --standalone"
            " picks one); find the holder with lsof -i :<port> and stop it if it is a leftover."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "rendezvous-rank-missing",
        r"\b(rank|world_?size) is not set but it is required for (env|file|tcp):// init method"
        r"|Error initializing torch\.distributed using (file):// rendezvous: (rank|world size) parameter missing",
        _missing,
    ),
    # torch 1.x's assert words it without "has not been" (distributed_errors reads the other wordings)
    known("process-group-not-initialized", r"Default process group is not initialized", _no_process_group),
    known(
        "rendezvous-address-in-use",
        r"\b[Aa]ddress already in use",
        _address_in_use,
        # a socket of the user's own server says the same: read only where torch's store is in the paste
        when=lambda match, text: bool(re.search(r"TCPStore|_tcp_rendezvous|init_process_group|c10d", text)),
    ),
]
