"""Training under `torchrun`: process group, wrapping, sharded data, and decisions all ranks agree on.

torchrun starts one process per device and sets RANK, WORLD_SIZE and LOCAL_RANK; the same
`torchwise train CONFIG` (or `fit` in a script) then runs in each. Every piece here is torch's
own: `init_process_group`, `DistributedDataParallel`, `fully_shard`, `all_reduce`; this module
only decides when each is called. The loop calls these functions by name:

    start_distributed(cfg)              init_process_group (nccl on CUDA, gloo on CPU), device per local rank
    ddp_model(dist, model)              DDP around the model
    shard_model(model, ...)             or fully_shard per block (FSDP2), in place
    shard_loader(dist, loader)          each rank reads its slice of the same (seed, epoch) permutation
    agree_window(dist, ctx, window)     a stream's ranks stop their epoch together
    step_samples(dist, n)               samples of the step over all ranks (the loss weights)
    grad_sync(dist, module, last=...)   no_sync on all but the last micro-batch of a window
    reduce_step(dist, ctx, ...)         one all_reduce: the step's loss, the global grad norm, a signal
    reduce_eval(dist, ...)              validation sums over the whole validation set
    stop_distributed(dist)              destroy_process_group

Exactness: N processes at batch B see the samples of one process at batch N*B, each loss is
weighted by its share of the step's samples, so the averaged gradient is the one-process
gradient up to float summation order.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from torchwise.config import RunConfig
from torchwise.data.loaders import EpochSampler
from torchwise.data.streams import is_stream
from torchwise.errors import ConfigError, RunFailed

if TYPE_CHECKING:
    from torchwise.runs.folder import RunFolder
    from torchwise.train.context import LoopContext

# The signal a rank saw, as a number all ranks can sum: any SIGTERM wins over SIGINT.
SIGNAL_CODES = {"SIGINT": 1.0, "SIGTERM": 1000.0}


@dataclass
class Distributed:
    """This process's place in the group and what it trains with."""

    kind: str  # "ddp" or "fsdp"
    rank: int
    world: int
    local_rank: int
    backend: str
    device: torch.device
    timeout_s: float
    owns_group: bool  # we initialised the process group, so we destroy it
    signals: list[str] = field(default_factory=list)  # seen by this rank, not yet agreed
    run_path: Path | None = None  # where a failing rank leaves its note (train/rank_failures.py)
    started: float = field(default_factory=time.time)

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def label(self) -> str:
        return f"rank {self.rank}/{self.world}"

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "world_size": self.world, "backend": self.backend, "rank": self.rank}


def under_torchrun() -> bool:
    return "RANK" in os.environ and "WORLD_SIZE" in os.environ and "LOCAL_RANK" in os.environ


def process_count(cfg: RunConfig) -> int:
    """How many processes this run trains with, known before the process group starts: torchrun's
    WORLD_SIZE, unless train.distributed=none makes every process a run of its own."""
    if cfg.train.distributed == "none" or not under_torchrun():
        return 1
    return int(os.environ["WORLD_SIZE"])


def start_distributed(cfg: RunConfig) -> Distributed | None:
    """Join torchrun's process group when launched by it; None for a plain single process.

    ``auto`` means DDP with more than one process; one process under torchrun trains plainly.
    """
    kind = cfg.train.distributed
    if kind == "none" or not under_torchrun():
        return None
    world = process_count(cfg)
    if kind == "auto":
        if world == 1:
            return None
        kind = "ddp"
    import torch.distributed as dist

    local_rank = int(os.environ["LOCAL_RANK"])
    use_cuda = cfg.train.device in ("auto", "cuda") and torch.cuda.is_available()
    if use_cuda:
        device, backend = torch.device("cuda", local_rank), "nccl"
        torch.cuda.set_device(device)
    else:
        if cfg.train.device == "cuda":
            raise ConfigError("train.device=cuda but torch sees no CUDA device",
                              hint="run `torchwise doctor`, or set train.device=auto (gloo on CPU)")
        device, backend = torch.device("cpu"), "gloo"
    owns = not dist.is_initialized()
    if owns:
        # The timeout bounds every collective: a rank that hangs makes the others fail, not wait forever.
        dist.init_process_group(backend, timeout=timedelta(seconds=cfg.train.collective_timeout_s),
                                device_id=device if use_cuda else None)
    return Distributed(kind=kind, rank=dist.get_rank(), world=dist.get_world_size(), local_rank=local_rank,
                       backend=dist.get_backend(), device=device, timeout_s=cfg.train.collective_timeout_s,
                       owns_group=owns)


def stop_distributed(dist_info: Distributed | None, *, clean: bool = True) -> None:
    """Leave the group. After a run every rank finished (``clean``), a barrier first: no rank
    tears its connections down while another still uses them (gloo aborts a rank whose peer
    closed mid-exchange, which failed a completed run about once in twenty here)."""
    import torch.distributed as dist

    if dist_info is None or not dist_info.owns_group or not dist.is_initialized():
        return
    if clean:
        with collective(dist_info, "the closing barrier"):
            dist.barrier()
    dist.destroy_process_group()


# What torch.distributed's backends say when a collective fails: NCCL raises DistError, gloo a
# plain RuntimeError ("[.../gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 5000ms for
# recv operation to complete", "Connection closed by peer", "Application timeout caused pair closure").
BACKEND_WORDS = ("gloo", "nccl", "timed out", "connection closed", "connection reset", "pair closure")


def backend_error(err: BaseException) -> bool:
    """A collective's failure, told apart from a RuntimeError of the user's model."""
    return isinstance(err, torch.distributed.DistError) or (
        isinstance(err, RuntimeError) and any(word in str(err).lower() for word in BACKEND_WORDS))


@contextlib.contextmanager
def collective(dist_info: Distributed, what: str, *, model_runs: bool = False) -> Iterator[None]:
    """A collective that failed (a rank died, or hung past the timeout) names this rank.

    ``model_runs``: the user's model runs inside too (torch's collectives in forward/backward), so
    only the backend's errors are ours to explain."""
    from torchwise.train.rank_failures import first_cause

    try:
        yield
    except (RuntimeError, torch.distributed.DistError) as err:
        if model_runs and not backend_error(err):
            raise
        broke = f"{dist_info.label}: {what} did not complete: {str(err).splitlines()[0][:300]}"
        cause = first_cause(dist_info.run_path, rank=dist_info.rank, since=dist_info.started)
        if cause is not None:
            raise CollectiveFailed(f"{cause}\n  ({broke})",
                                   hint="fix what that rank ran into, then `torchwise resume`") from err
        raise CollectiveFailed(broke, hint=f"another rank failed or hung (collectives time out after "
                                           f"{dist_info.timeout_s:g} s, train.collective_timeout_s) without saying "
                                           "why (killed?); `torchwise resume` once it is fixed") from err


class CollectiveFailed(RunFailed):
    """A collective broke because another rank left or hung: not this rank's own failure."""


class SilentRun:
    """What ranks other than 0 hold in place of a `RunFolder`: the path, and no writes."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def checkpoints(self) -> Path:
        return self.path / "checkpoints"

    def _nothing(self, *args: Any, **kwargs: Any) -> None:
        return None

    enable_tensorboard = write_config = write_json = log_metrics = log_event = write_summary = close = _nothing


def rank_run_folder(dist_info: Distributed | None, open_folder: Callable[[], RunFolder]) -> Any:
    """Rank 0 opens (or creates) the run folder and tells the others where it is."""
    if dist_info is None:
        return open_folder()
    import torch.distributed as dist

    run = open_folder() if dist_info.is_main else None
    shared = [str(run.path) if run is not None else None]
    with collective(dist_info, "sharing the run folder"):
        dist.broadcast_object_list(shared, src=0)
    return run if run is not None else SilentRun(Path(shared[0]))


def ddp_model(dist_info: Distributed, model: nn.Module) -> nn.Module:
    """DDP around the model (it broadcasts rank 0's weights, then all-reduces gradients in buckets)."""
    from torch.nn.parallel import DistributedDataParallel

    device_ids = [dist_info.device.index] if dist_info.device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids)


def shard_model(model: nn.Module, *, cfg: RunConfig, precision: Any) -> None:
    """`fully_shard` each block (module classes named by train.fsdp_blocks, else the top-level children
    with parameters), then the root; parameters in the precision's dtype, gradients reduced in fp32."""
    from fnmatch import fnmatch

    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    if precision.name == "fp16":
        raise ConfigError("train.precision=fp16 is not supported with train.distributed=fsdp",
                          hint="use bf16 (no loss scaling needed) or fp32")
    dtype = {"bf16": torch.bfloat16}.get(precision.name)
    policy = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=torch.float32 if dtype else None)
    patterns = cfg.train.fsdp_blocks
    if patterns:
        blocks = [m for m in model.modules() if m is not model
                  and any(fnmatch(type(m).__name__, pattern) for pattern in patterns)]
        if not blocks:
            names = sorted({type(m).__name__ for m in model.modules()})
            raise ConfigError(f"train.fsdp_blocks={patterns} matches no module of the model",
                              hint=f"name module classes of the model: {', '.join(names[:12])}")
    else:
        blocks = [child for child in model.children() if any(True for _ in child.parameters())]
    for block in blocks:
        fully_shard(block, mp_policy=policy)
    fully_shard(model, mp_policy=policy)


def local_tensors(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """This rank's shards of FSDP2's DTensor gradients (plain tensors pass through)."""
    return [t.to_local() if hasattr(t, "to_local") else t for t in tensors]


def clip_shards(grads: list[torch.Tensor], *, max_norm: float, total_norm: float) -> None:
    """clip_grad_norm_'s scaling on this rank's gradient shards, with the norm over all ranks."""
    torch._foreach_mul_(grads, min(1.0, max_norm / (total_norm + 1e-6)))


def shard_loader(dist_info: Distributed, loader: DataLoader, *, what: str) -> None:
    """Give each rank its slice of the loader's `EpochSampler` (same permutation on every rank).

    A stream has no sampler: it splits itself (`torchwise.stream_part`), and ranks agree at each
    step whether all of them still have data (`agree_window`)."""
    if what == "validation" and dist_info.kind == "fsdp":  # every rank runs every forward, in step
        if is_stream(loader):
            raise ConfigError("under FSDP the validation data cannot be a stream",
                              hint="every rank runs the whole validation set in step, so pass a Dataset "
                                   "for validation (or train with train.distributed=ddp)")
        return
    if is_stream(loader):
        return
    sampler = loader.sampler
    if not isinstance(sampler, EpochSampler) or not loader.batch_size:
        raise ConfigError(f"under torchrun the {what} data must be a Dataset, not a DataLoader with its own sampler",
                          hint="pass the Dataset to fit(): torchwise gives each rank its shard of the same order")
    sampler.shard(rank=dist_info.rank, world=dist_info.world, batch_size=loader.batch_size)
    last = sampler.size % (loader.batch_size * dist_info.world)
    if what == "training" and 0 < last < dist_info.world:
        raise ConfigError(f"the last batch of an epoch holds {last} samples, fewer than the {dist_info.world} "
                          "processes: a rank would have none",
                          hint=f"change train.batch_size (now {loader.batch_size}) so that "
                               f"{sampler.size} samples do not leave 1..{dist_info.world - 1} in the last batch")


def step_samples(dist_info: Distributed | None, samples: int, device: torch.device) -> int:
    """All ranks' samples in this step: each micro-batch loss is weighted by its share of them."""
    if dist_info is None:
        return samples
    import torch.distributed as dist

    total = torch.tensor([samples], device=device, dtype=torch.int64)
    with collective(dist_info, "counting the step's samples"):
        dist.all_reduce(total)
    return int(total.item())


def agree_window(dist_info: Distributed, ctx: LoopContext, window: list) -> list:
    """A stream's ranks may run out at different steps; all of them stop when the first does.

    Otherwise the ranks still holding data would wait for the others' gradients forever. The
    samples the others had left in this epoch are not trained on (event `stream_ranks_uneven`)."""
    import torch.distributed as dist

    have = torch.tensor([1 if window else 0], device=ctx.device, dtype=torch.int64)
    with collective(dist_info, "agreeing that every rank has a batch"):
        dist.all_reduce(have)
    ranks_with_data = int(have.item())
    if ranks_with_data == dist_info.world:
        return window
    if ranks_with_data:
        ctx.run.log_event("stream_ranks_uneven", ranks_with_data=ranks_with_data, world_size=dist_info.world)
        ctx.progress.message(f"warning: {dist_info.world - ranks_with_data} of {dist_info.world} processes ran out "
                             "of stream first; the epoch ends for all of them, and what the others had left is "
                             "not trained on (give each process an equal share: torchwise.stream_part())")
    return []


def grad_sync(dist_info: Distributed | None, module: nn.Module, *, last: bool) -> contextlib.AbstractContextManager:
    """Gradients are all-reduced only after the last micro-batch of an accumulation window.

    Those collectives run inside torch (DDP's backward hooks; FSDP also gathers parameters in
    forward), so a rank that never gets there leaves the others waiting in torch's code: when
    they time out, the error names this rank like our own collectives. Only the backend's errors
    are caught: a RuntimeError of the model itself stays the model's.
    """
    if dist_info is None:
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    if dist_info.kind == "fsdp":
        module.set_requires_gradient_sync(last)  # type: ignore[operator]
        what = "FSDP's parameter gathers and gradient reduce-scatter (forward/backward)"
    else:
        if not last:
            stack.enter_context(module.no_sync())  # type: ignore[operator]
        what = "DDP's gradient all-reduce (backward)"
    stack.enter_context(collective(dist_info, what, model_runs=True))
    return stack


def validation_collectives(dist_info: Distributed | None) -> contextlib.AbstractContextManager:
    """Under FSDP every rank runs every validation forward, each gathering parameters: a rank that
    hangs there leaves the others in torch's all-gather, whose timeout names this rank too. (Under
    DDP validation runs the plain module; its one all-reduce is `reduce_eval`'s own.)"""
    if dist_info is None or dist_info.kind != "fsdp":
        return contextlib.nullcontext()
    return collective(dist_info, "FSDP's parameter gathers (validation forward)", model_runs=True)


def reduce_step(dist_info: Distributed, ctx: LoopContext, *, loss_sum: torch.Tensor,
                norms: list[torch.Tensor]) -> tuple[float, float]:
    """One all_reduce per step: the loss over all ranks, the global gradient norm, and a signal any
    rank saw. Every rank gets the same numbers, so the finite check and the stop agree."""
    import math

    import torch.distributed as dist

    code = max((SIGNAL_CODES[name] for name in dist_info.signals), default=0.0)
    local_sq = torch.stack([n.double() ** 2 for n in norms]).sum() if norms else torch.zeros((), dtype=torch.float64,
                                                                                           device=ctx.device)
    values = torch.stack([loss_sum.double(), local_sq.to(ctx.device), torch.tensor(code, dtype=torch.float64,
                                                                                  device=ctx.device)])
    with collective(dist_info, "the step's all_reduce"):
        dist.all_reduce(values)
    loss, sq, codes = values.tolist()
    # DDP: every rank holds the whole averaged gradient, so the local norm is the global one.
    norm = math.sqrt(sum(float(n) ** 2 for n in torch.stack(norms).tolist())) if norms else 0.0
    agree_signal(dist_info, ctx, codes)
    return loss / dist_info.world, norm if dist_info.kind == "ddp" else math.sqrt(sq)


def agree_start(dist_info: Distributed) -> str | None:
    """Collective at the end of start-up: the signal any rank saw during it (SIGTERM over SIGINT),
    or None. Every rank gets here, so a rank signalled early waits for the others' set-up instead of
    leaving them in a collective it will never join."""
    import torch.distributed as dist

    code = torch.tensor([max((SIGNAL_CODES[name] for name in dist_info.signals), default=0.0)],
                        dtype=torch.float64, device=dist_info.device)
    with collective(dist_info, "agreeing that start-up is done"):
        dist.all_reduce(code)
    codes = float(code.item())
    return None if not codes else "SIGTERM" if codes >= SIGNAL_CODES["SIGTERM"] else "SIGINT"


def agree_signal(dist_info: Distributed, ctx: LoopContext, codes: float) -> None:
    """Stop every rank at the same step: a signal seen by any rank stops them all."""
    if codes and not ctx.stop_requested:
        ctx.stop_requested.append("SIGTERM" if codes >= SIGNAL_CODES["SIGTERM"] else "SIGINT")


def reduce_eval(dist_info: Distributed, *, loss_sum: torch.Tensor, count: int,
                metrics: dict[str, Any]) -> tuple[torch.Tensor, int]:
    """Sum each rank's validation shard: the loss, the sample count and each metric's running sums."""
    import torch.distributed as dist

    if dist_info.kind == "fsdp":  # every rank evaluated the whole set (sharded forwards run in step)
        return loss_sum, count
    totals = torch.stack([loss_sum.double(), torch.tensor(float(count), dtype=torch.float64,
                                                          device=loss_sum.device)])
    with collective(dist_info, "reducing validation"):
        dist.all_reduce(totals)
        for metric in metrics.values():
            reduce_metric(metric)
    return totals[0].float(), int(totals[1].item())


def reduce_metric(metric: Any) -> None:
    """Built-in metrics keep sums (all-reduced here); a torchmetrics Metric syncs itself in compute()."""
    import torch.distributed as dist

    for name in ("sums", "counts"):
        value = getattr(metric, name, None)
        if isinstance(value, torch.Tensor):
            dist.all_reduce(value)
            return


def check_metrics(metrics: dict[str, Any]) -> None:
    """Refuse a metric whose state cannot be combined across ranks (it would report one shard)."""
    from torchwise.train.metrics import MicroF1, _Counts

    for name, metric in metrics.items():
        known = isinstance(metric, _Counts | MicroF1) or type(metric).__module__.startswith("torchmetrics")
        if not known:
            raise ConfigError(f"metric {name!r} ({type(metric).__name__}) cannot be combined across processes",
                              hint="use a torchmetrics.Metric (it syncs itself) or a function metric "
                                   "fn(logits, target) returning the batch mean")
