"""Known errors from torch.distributed: process groups, DDP, NCCL collectives, the rendezvous
(NCCL's own set-up failures, a system call, a GPU per rank, shared memory: ``nccl_errors``).

The NCCL watchdog prints one line per rank and per stuck collective, in two formats (before
torch 2.2: ``[E ProcessGroupNCCL.cpp:737] [Rank 1] ...``; since: ``[rank0]:[E321 ...]`` with
NumelIn/NumelOut); the builder reads the collective, its size and the timeout from either.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known
from torchwise.explain.paste import PREFIX

# The paste shows the processes were started by a launcher: its command, its own frames, or a
# rank above 0 printing.
LAUNCHED = re.compile(
    r"\btorchrun\b|torch\.distributed\.(?:launch|run)\b|torch[\\/]distributed[\\/](?:launch|run)\.py"
    r"|\baccelerate launch\b|\bdeepspeed\s+(?:--\S+\s+)*\S+\.py|\[rank[1-9]\d*\]"
)


def _no_process_group(match: re.Match[str], text: str) -> Explanation:
    if LAUNCHED.search(text):
        # "started as plain python" is what the paste rules out
        cause = (
            "The processes were started by a launcher, but the script creates the group only behind a"
            " condition this launch does not meet: a flag that turns distribution on (--launcher pytorch,"
            " --distributed) not given, or a check of args.local_rank, which torchrun no longer passes"
            " (it sets the LOCAL_RANK environment variable); or a distributed call (SyncBatchNorm,"
            " dist.get_rank, DistributedSampler) runs before init_process_group."
        )
        fix = (
            "Give the script the flag its launcher needs (for OpenMMLab tools: --launcher pytorch), read"
            " local_rank = int(os.environ['LOCAL_RANK']) instead of --local_rank, and call"
            " dist.init_process_group() before building the model, sampler or SyncBatchNorm."
        )
    else:
        cause = (
            "A script written for several GPUs was started as plain `python train.py` (its"
            " launcher normally sets up the group), or a single-GPU run still uses"
            " SyncBatchNorm (a 'SyncBN' norm in the config) or distributed helpers in"
            " evaluation."
        )
        fix = (
            "Start it with the launcher: torchrun --nproc-per-node N train.py (the script calls"
            " dist.init_process_group). For one GPU replace SyncBatchNorm with BatchNorm"
            " ('SyncBN' -> 'BN'), guard distributed calls with"
            " `if dist.is_available() and dist.is_initialized():`, or create a one-process"
            ' group: dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500",'
            " rank=0, world_size=1)."
        )
    return answer(
        title="A torch.distributed call ran without a process group",
        meaning=(
            "dist.get_rank(), all_reduce, barrier, DistributedSampler and SyncBatchNorm need"
            " dist.init_process_group() to have run in every process first."
        ),
        cause=cause,
        fix=fix,
    )


def _unused_parameters(match: re.Match[str], text: str) -> Explanation:
    names = fact(text, r"Parameters? which did not receive grad for rank \d+: ([^\n]+)")
    indices = fact(text, r"Parameter indices which did not receive grad for rank \d+: ([\d ]+)")
    found = f" Named in the message: {names.strip()}." if names else (
        f" Parameter indices without a gradient: {indices.strip()}." if indices else ""
    )
    return answer(
        title="DDP: some parameters got no gradient in the last step",
        meaning=(
            "DDP all-reduces each parameter's gradient when backward produces it; parameters"
            " that took no part in the loss never produce one, so the reduction of the step"
            " never finishes." + found
        ),
        cause=(
            "A layer defined in __init__ but not used in forward (a leftover head, an unused"
            " branch), a branch taken only on some steps or ranks (multi-task heads, optional"
            " losses), or a forward output that does not enter the loss."
        ),
        fix=(
            "Remove the unused layers or give them requires_grad=False; make every forward output"
            " part of the loss. When the branches really vary per step pass"
            " find_unused_parameters=True to DistributedDataParallel (it costs an extra graph"
            " walk each step; static_graph=True when the same ones are always unused). To get"
            " the parameter names set TORCH_DISTRIBUTED_DEBUG=DETAIL."
        ),
    )


def _watchdog(match: re.Match[str], text: str) -> Explanation:
    details = dict(re.findall(r"(\w+)=(\w+)", match.group(1)))
    op, seq = details.get("OpType", "a collective"), details.get("SeqNum", "?")
    timeout_ms = int(details.get("Timeout(ms)", 0) or fact(text, r"Timeout\(ms\)=(\d+)") or 0)
    minutes = f" ({timeout_ms // 60000} min)" if timeout_ms else ""
    size = f", {details['NumelIn']} elements" if "NumelIn" in details else ""
    ranks = sorted({int(rank) for rank in re.findall(r"\[Rank (\d+)\] Watchdog", text)})
    waiting = f" Ranks {', '.join(map(str, ranks))} timed out waiting." if len(ranks) > 1 else ""
    enqueued = fact(text, r"last enqueued NCCL work: (\d+)")
    completed = fact(text, r"last completed NCCL work: (\d+)")
    progress = (
        f" The last collective that completed was #{completed}; #{enqueued} was already queued."
        if enqueued and completed
        else ""
    )
    return answer(
        title=f"NCCL timeout: {op} #{seq} waited {timeout_ms} ms{minutes} for the other ranks",
        meaning=(
            f"Collective SeqNum={seq} ({op}{size}) did not finish within Timeout(ms)={timeout_ms}"
            f"{minutes}: at least one rank never joined it.{waiting}{progress}"
        ),
        cause=(
            "The ranks are out of step: one rank does work the others wait for (evaluation,"
            " checkpoint saving or data preprocessing on rank 0 while the rest sit in a"
            " collective), ranks run different numbers of steps or call collectives in a"
            " different order (uneven batches per rank, a branch that skips backward on one"
            " rank), or a rank crashed or hung (its own error is earlier in the log); or the GPUs"
            " cannot exchange data on this machine (peer-to-peer over PCIe blocked, common on"
            " consumer GPUs and VMs: the same job runs on other machines)."
        ),
        fix=(
            "Make every rank call the same collectives in the same order (DistributedSampler"
            " with drop_last=True, the same number of steps, rank-0-only work followed by"
            " dist.barrier()). TORCH_DISTRIBUTED_DEBUG=DETAIL and TORCH_NCCL_DESYNC_DEBUG=1 show"
            " which rank is behind; TORCH_NCCL_ASYNC_ERROR_HANDLING=1 (the default) makes the"
            " job fail instead of hanging. Raise the limit only for work that is legitimately"
            " long on one rank: dist.init_process_group(timeout=datetime.timedelta(hours=2))"
            " (ddp_timeout in Hugging Face Trainer). NCCL_P2P_DISABLE=1 tells the machine's own case."
        ),
    )


# What a worker's exit code says when torchrun reports it (negative: killed by that signal).
EXIT_CODES = {
    "-9": ("was killed (SIGKILL): most often the machine ran out of RAM and the kernel's"
           " out-of-memory killer stopped it, or a job scheduler did",
           "use less host memory per rank (smaller batch, fewer DataLoader workers, load data"
           " lazily); dmesg | grep -i kill shows the OOM killer"),
    "-6": ("aborted (SIGABRT) in native code: a CUDA or NCCL error, or a failed C++ check",
           "read that rank's output above the summary for the CUDA/NCCL message; a smaller"
           " batch helps when it is GPU memory"),
    "-7": ("died of a bus error (SIGBUS): shared memory (/dev/shm) ran out",
           "give the container more shared memory (--shm-size=8g or --ipc=host)"),
    "-11": ("crashed with a segmentation fault in native code",
            "run one process (python train.py) to get a traceback, and check the versions of"
            " compiled extensions"),
}


def _rank_error(text: str) -> str | None:
    """The error line a rank printed above torchrun's summary (behind its "[rank0]:"): an exception
    line, or argparse's "prog: error: ..." under its "usage: prog ..." line (exit code 2)."""
    summary = text.find("failed (exitcode") if "failed (exitcode" in text else text.find("ChildFailedError")
    before = [PREFIX.sub("", line).strip() for line in text[: max(summary, 0)].splitlines()]
    usage = any(line.startswith("usage: ") for line in before)
    pattern = r"[\w.]*(?:Error|Exception)\b.*:" + (r"|[^:\n]+: error: \S" if usage else "")
    return next((line for line in reversed(before) if re.match(pattern, line)), None)


def _exit_code(text: str) -> str:
    """The worker's exit code from torchrun's log line ("failed (exitcode: -9)") or, where the paste
    holds only the summary, its Root Cause table ("exitcode  : -9 (pid: 1234)")."""
    return fact(text, r"failed \(exitcode: (-?\d+)\)") or fact(text, r"\bexitcode\s*:\s*(-?\d+)") or "?"


def _no_rank_error(match: re.Match[str], text: str) -> bool:
    """The summary is the answer only where the rank's own error is not in the paste (or the
    exit code itself names the cause): an exception of the rank that no entry knows is a
    cause explain cannot tell, not "read the traceback" of an error the reader already has."""
    return _exit_code(text) in EXIT_CODES or _rank_error(text) is None


def _child_failed(match: re.Match[str], text: str) -> Explanation:
    code = _exit_code(text)
    rank = fact(text, r"failed \(exitcode: -?\d+\) local_rank: (\d+)") or fact(text, r"\(local_rank: (\d+)\)")
    who = f"local rank {rank}" if rank else "a worker"
    own = _rank_error(text)
    if code in EXIT_CODES:
        cause, fix = EXIT_CODES[code]
        cause = f"The process {cause}."
    else:
        cause = "The script raised an exception in that process; torchrun only reports that it exited."
        fix = "read that rank's own traceback, printed above the summary"
    seen = f" That rank's own error, printed above the summary: {own}" if own else ""
    return answer(
        title=f"torchrun: {who} exited with code {code}; the real error is that rank's own",
        meaning=(
            "ChildFailedError is torchrun's summary that a worker process ended; it is not the"
            f" error itself.{seen}"
        ),
        cause=cause,
        fix=(
            f"{fix[:1].upper()}{fix[1:]}. The 'Root Cause (first observed failure)' block names"
            " the rank that failed first; running the script as one process (python train.py,"
            " or torchrun --nproc-per-node 1) shows its error plainly."
        ),
    )


def _port_in_use(match: re.Match[str], text: str) -> Explanation:
    port = match.group(1) or match.group(2) or fact(text, r"(?:port:? |\]:)(\d{2,5})\b") or "29500"
    return answer(
        title=f"The rendezvous port {port} is already in use",
        meaning=(
            f"Rank 0 starts a TCP store on MASTER_PORT ({port}) for the ranks to find each"
            " other; another process already listens there."
        ),
        cause=(
            "A second job on the same machine uses the default port 29500, or a process of an"
            " earlier run is still alive."
        ),
        fix=(
            f"Give the second job its own port: torchrun --master-port 29501 ... (or"
            f" MASTER_PORT=29501 in the environment of the launcher that starts the run), or use"
            f" torchrun --standalone, which picks a free port. Find the holder with"
            f" lsof -i :{port} and stop it if it is a leftover."
        ),
    )


def _ready_twice(match: re.Match[str], text: str) -> Explanation:
    name = fact(text, r"Parameter at index \d+ with name (\S+) has been marked as ready twice")
    which = f" ({name})" if name else ""
    return answer(
        title="DDP saw a parameter's gradient arrive twice in one step",
        meaning=(
            "DistributedDataParallel registers one hook per parameter and expects each to fire"
            f" once per backward; one parameter{which} fired twice."
        ),
        cause=(
            "Most often reentrant gradient checkpointing (torch.utils.checkpoint with"
            " use_reentrant=True, or a Hugging Face model's gradient_checkpointing) runs a second"
            " backward through the checkpointed layers; otherwise a parameter is used outside"
            " forward() or shared between several passes in one step."
        ),
        fix=(
            "Use non-reentrant checkpointing: checkpoint(fn, x, use_reentrant=False), or"
            " model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={'use_reentrant':"
            " False}); or, if the graph is the same every step, DDP(model, static_graph=True);"
            " or turn gradient checkpointing off. TORCH_DISTRIBUTED_DEBUG=INFO names the"
            " parameter."
        ),
    )


def _accelerate_gpu_ids(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="accelerate is set up for several GPUs but was given fewer than two",
        meaning=(
            "accelerate launch reads its saved config (accelerate config) or the flags; that"
            " config says multi-GPU (distributed_type: MULTI_GPU) while the GPU ids it may use"
            " name at most one."
        ),
        cause=(
            "The default config was written for another machine or another run (gpu_ids: 0, or"
            " num_processes above the GPUs that CUDA_VISIBLE_DEVICES leaves), and this machine"
            " or run has one GPU."
        ),
        fix=(
            "Run accelerate config again for this machine (one GPU: 'This machine', no"
            " distributed training), or pass the flags: accelerate launch --num_processes 1"
            " script.py for one GPU, or --multi_gpu --gpu_ids all (or 0,1) with two or more."
        ),
    )


def _env_not_set(match: re.Match[str], text: str) -> Explanation:
    variable = match.group(1)
    if variable is None:  # tcp://: the script passes rank/world_size, from the launcher's arguments
        parameter = match.group(2)
        title = f"init_process_group('tcp://...') got no {parameter}: the script was not started by a launcher"
        meaning = (
            "A tcp:// rendezvous needs rank and world_size passed to init_process_group; the"
            " script takes them from what the launcher gives each process (--local_rank, RANK),"
            f" and {parameter} was None."
        )
    else:
        title = f"init_process_group('env://') found no {variable}: the script was not started by a launcher"
        meaning = (
            "The env:// rendezvous reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from the"
            " environment, which torchrun (or torch.distributed.launch, SLURM, accelerate) sets"
            f" for each process; {variable} is not set."
        )
    return answer(
        title=title,
        meaning=meaning,
        cause=(
            "A script written for distributed training was started with plain python (or an IDE),"
            " or a flag that turns on distributed mode (--distributed, --launcher pytorch) was"
            " given without the launcher."
        ),
        fix=(
            "Start it with the launcher: torchrun --nproc-per-node N script.py (one process per"
            " GPU); for one process without distribution drop the distributed flag, or set the"
            " variables yourself (RANK=0 WORLD_SIZE=1 MASTER_ADDR=localhost MASTER_PORT=29500)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "process-group-not-initialized",
        r"Default process group (?:has not been|is not being) initialized",
        _no_process_group,
    ),
    known(
        "ddp-unused-parameters",
        r"Expected to have finished reduction in the prior iteration before starting a new one",
        _unused_parameters,
    ),
    known(
        "nccl-watchdog-timeout",
        r"Watchdog caught collective operation timeout: WorkNCCL\(([^)]*\))\)?",
        _watchdog,
    ),
    known(
        "child-failed",
        r"ChildFailedError|failed \(exitcode: -?\d+\) local_rank:",
        _child_failed,
        generic=True,
        when=_no_rank_error,
    ),
    known(
        "port-in-use",
        r"The server socket has failed to (?:listen on any local network address|bind to"
        r" \S*:(\d+)).*?(?:port: (\d+)|[Aa]ddress already in use|EADDRINUSE)",
        _port_in_use,
    ),
    known("ddp-ready-twice", r"Expected to mark a variable ready only once", _ready_twice),
    known(
        "accelerate-gpu-ids",
        r"Less than two GPU ids were configured and tried to run on on? multiple GPUs",
        _accelerate_gpu_ids,
    ),
    known(
        "distributed-env-missing",
        r"Error initializing torch\.distributed using env:// rendezvous: environment variable"
        r" (\w+) expected, but not set"
        r"|Error initializing torch\.distributed using tcp:// rendezvous: (rank|world size) parameter missing",
        _env_not_set,
    ),
]
