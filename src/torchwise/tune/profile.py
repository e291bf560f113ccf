"""`profile`: where a training step's time goes, and what that makes the run bound by.

Steps of the run's own kind (the configured loader, batch size, precision, optimizer and
clipping) are timed phase by phase: data wait (the loader's ``next``), host-to-device copy,
forward with the loss, backward, optimizer (unscale, clip, step, zero_grad) and logging (the
one read of the loss per step that the loop makes); on a GPU each phase ends with a
synchronisation so the time lands where it is spent. Checkpointing is timed once (a real save)
and spread over the steps between saves. The same steps without the phase boundaries give the
measured step time, so the instrumented phases can be checked against it (their sum should be
within 10%). Both are the 10th percentile of their steps (steps not interrupted by other
processes); a phase's figure is its share of all instrumented time applied to that step.

One more step runs under a dispatch-mode counter (aten ops per step and host reads of device
values: ``.item()``, ``.tolist()``, copies to the host) and under `torch.utils.flop_counter`
(FLOPs), and a large matmul gives the device's attainable FLOP/s. The verdict, first match wins:

* **data-bound**: the data wait is at least a quarter of the step (``data.num_workers``; run
  `torchwise tune workers`).
* **sync-heavy**: more than two host reads per step (the loop's own is one): a ``.item()``,
  boolean-mask indexing or ``nonzero`` in the model stalls the GPU every step.
* **host-bound (launch-bound)**: compute reaches under 10% of the attainable FLOP/s: the step
  is many small ops and their per-op overhead (``train.batch_size``, ``train.compile``).
* **compute-bound** otherwise (``train.precision=bf16`` on a GPU, ``train.compile``).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from torchwise.data.streams import batches_in_epoch
from torchwise.tune.workload import Workload, backward, optimizer_step, run_loader, step_loss, to_device

PHASES = ("data_wait", "host_to_device", "forward", "backward", "optimizer", "logging")
HOST_READS = {"aten._local_scalar_dense.default", "aten.equal.default", "aten.is_nonzero.default",
              "aten.nonzero.default", "aten.masked_select.default"}


@dataclass
class ProfileResult:
    """Milliseconds per step for each phase, the measured step, counts, and the verdict."""

    phases_ms: dict[str, float]
    checkpoint_ms_per_step: float
    phase_sum_ms: float
    measured_step_ms: float
    ops_per_step: int
    host_reads_per_step: int
    flops_per_step: float
    achieved_flops: float
    attainable_flops: float
    verdict: str
    reason: str
    recommendation: str
    steps: int
    batch_size: int
    device: str
    trace: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class OpCounter(TorchDispatchMode):
    """Counts aten ops, and those that read a value of the step's device back to the host.

    On a CPU nothing syncs, so a read counts when it would on a GPU: any tensor but those kept
    on the host by design (``host_side``: the optimizer's step counters)."""

    def __init__(self, host_side: set[int] | None = None) -> None:
        super().__init__()
        self.ops = 0
        self.host_reads = 0
        self.host_side = host_side or set()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops += 1
        name = str(func)
        if name in HOST_READS:
            source = args[0]
            if not (isinstance(source, torch.Tensor) and id(source.untyped_storage()) in self.host_side):
                self.host_reads += 1
        elif name == "aten.index.Tensor" and any(  # boolean-mask indexing: the size needs the mask's count
                isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) for i in args[1]):
            self.host_reads += 1
        elif name in ("aten._to_copy.default", "aten.copy_.default"):
            target = (kwargs or {}).get("device")
            source = args[0] if name == "aten._to_copy.default" else args[1]
            destination = target if target is not None else (args[0].device if name == "aten.copy_.default"
                                                             else source.device)
            if isinstance(source, torch.Tensor) and source.device.type != "cpu" and \
                    torch.device(destination).type == "cpu":
                self.host_reads += 1
        return func(*args, **(kwargs or {}))


def endless(loader: torch.utils.data.DataLoader) -> Iterator[Any]:
    while True:
        yield from loader


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def undisturbed(seconds: list[float]) -> float:
    """The 10th percentile: a step that other processes did not interrupt. On a shared machine step
    times split into fast steps and steps preempted for a whole time slice; a median can land on
    either side of that gap, the fast end stays put."""
    return sorted(seconds)[len(seconds) // 10]


def timed_step(work: Workload, batches: Iterator[Any], *, phases: bool) -> dict[str, float]:
    """One step; with ``phases`` a clock reading (after a device sync) at every phase boundary."""
    clock, device = time.perf_counter, work.device
    marks = [clock()]

    def mark() -> None:
        if phases:
            _sync(device)
            marks.append(clock())

    batch = next(batches)
    mark()
    batch = to_device(work, batch)
    mark()
    loss = step_loss(work, batch)
    mark()
    backward(work, loss)
    mark()
    optimizer_step(work)
    mark()
    float(loss.detach())  # the loop's one read per step (loss, norm and finite check together)
    _sync(device)
    marks.append(clock()) if phases else None
    if not phases:
        return {"step": clock() - marks[0]}
    return {name: marks[i + 1] - marks[i] for i, name in enumerate(PHASES)}


def attainable_flops(device: torch.device, dtype: torch.dtype = torch.float32) -> float:
    """FLOP/s of a large matmul on ``device``: what this device reaches on dense work, from the
    fastest of ten short windows (other load on the machine slows some windows, not the device)."""
    size = 2048 if device.type == "cuda" else 512
    generator = torch.Generator(device=device).manual_seed(0)  # its own: the global RNG stays untouched
    a = torch.randn(size, size, device=device, dtype=dtype, generator=generator)
    b = torch.randn(size, size, device=device, dtype=dtype, generator=generator)
    a @ b
    _sync(device)
    fastest = 0.0
    for _ in range(10):
        repeats, started = 0, time.perf_counter()
        while time.perf_counter() - started < 0.02:
            a @ b
            repeats += 1
        _sync(device)
        fastest = max(fastest, 2 * size**3 * repeats / (time.perf_counter() - started))
    return fastest


def checkpoint_cost(work: Workload) -> float:
    """Seconds for one real checkpoint save of this model and optimizer (to a temporary folder)."""
    from torchwise.checkpoints.checkpoint import save_checkpoint
    from torchwise.reproducibility import capture_rng_state

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        save_checkpoint(Path(folder) / "last", model_state=work.model.state_dict(),
                        training_state={"optimizer": work.optimizer.state_dict(), "rng": capture_rng_state()},
                        meta={"step": 0})
        return time.perf_counter() - started


def verdict(phases: dict[str, float], *, host_reads: int, achieved: float, attainable: float,
            ops: int) -> tuple[str, str, str]:
    """(verdict, reason, recommendation) from per-step seconds and counts; the rules of the docstring."""
    total = sum(phases.values())
    wait = phases["data_wait"] / total if total else 0.0
    if wait >= 0.25:
        return ("data-bound", f"the step waits for data {wait:.0%} of the time",
                "more loader workers (data.num_workers; `torchwise tune workers` picks the number), "
                "or a cheaper __getitem__ (decode once, cache)")
    if host_reads > 2:
        return ("sync-heavy", f"{host_reads} host reads of device values per step (the loop's own is 1)",
                "remove .item()/.tolist()/boolean-mask indexing from forward and the loss")
    if attainable and achieved < 0.10 * attainable:
        compute = phases["forward"] + phases["backward"] + phases["optimizer"]
        return ("host-bound (launch-bound)",
                f"compute runs at {achieved / attainable:.1%} of this device's matmul FLOP/s: {ops} ops per step "
                f"at {compute / max(ops, 1) * 1e6:.1f} us each",
                "a larger train.batch_size (tune batch-size finds the largest), train.compile=true to fuse ops")
    return ("compute-bound", f"compute runs at {achieved / attainable:.0%} of this device's matmul FLOP/s",
            "train.precision=bf16 on a GPU that has it, train.compile=true")


def profile_workload(work: Workload, *, steps: int = 20, warmup: int = 5, repeats: int = 3,
                     batch_size: int | None = None, trace: Path | None = None) -> ProfileResult:
    """Profile a `Workload`; its model, optimizer and RNGs are restored afterwards."""
    from torch.utils.flop_counter import FlopCounterMode

    from torchwise.tune.state import preserved

    batch_size = batch_size or work.cfg.train.batch_size
    loader = run_loader(work, batch_size)
    with preserved(work.model, work.optimizer, work.scheduler):
        work.model.train()
        batches = endless(loader)
        for _ in range(warmup):
            timed_step(work, batches, phases=False)
        per_phase: dict[str, list[float]] = {name: [] for name in PHASES}
        plain: list[float] = []
        for _ in range(steps * repeats):  # alternated step by step: other load hits both alike
            for name, seconds in timed_step(work, batches, phases=True).items():
                per_phase[name].append(seconds)
            plain.append(timed_step(work, batches, phases=False)["step"])
        # Optimizer step counters live on the host (torch's default): reading them costs no sync.
        counter = OpCounter({id(t.untyped_storage()) for state in work.optimizer.state.values()
                             for t in state.values() if isinstance(t, torch.Tensor) and t.device.type == "cpu"
                             and t.dim() == 0})
        with FlopCounterMode(display=False) as flop_counter, counter:
            timed_step(work, batches, phases=False)
        checkpoint = checkpoint_cost(work)
        if trace is not None:
            write_trace(work, batches, trace)
    del batches
    # Each phase's share of all instrumented time, applied to an undisturbed instrumented step:
    # the phases then add up to that step (a sum of per-phase medians would not, on skewed times).
    totals = [sum(parts) for parts in zip(*per_phase.values(), strict=True)]
    typical = undisturbed(totals)
    phases = {name: typical * sum(values) / sum(totals) for name, values in per_phase.items()}
    flops = float(flop_counter.get_total_flops())
    compute = phases["forward"] + phases["backward"] + phases["optimizer"]
    achieved = flops / compute if compute else 0.0
    attainable = attainable_flops(work.device)
    kind, reason, advice = verdict(phases, host_reads=counter.host_reads, achieved=achieved,
                                   attainable=attainable, ops=counter.ops)
    # `last` is written every N steps, else once an epoch (a stream of unknown length: once a run)
    batches = batches_in_epoch(loader) or work.cfg.train.max_steps or 1
    steps_per_save = work.cfg.checkpoint.every_n_steps or max(1, batches // work.cfg.train.accumulate)
    return ProfileResult(
        phases_ms={name: seconds * 1e3 for name, seconds in phases.items()},
        checkpoint_ms_per_step=checkpoint / steps_per_save * 1e3 if work.cfg.checkpoint.enabled else 0.0,
        phase_sum_ms=sum(phases.values()) * 1e3, measured_step_ms=undisturbed(plain) * 1e3,
        ops_per_step=counter.ops, host_reads_per_step=counter.host_reads, flops_per_step=flops,
        achieved_flops=achieved, attainable_flops=attainable, verdict=kind, reason=reason,
        recommendation=advice, steps=steps * repeats, batch_size=batch_size, device=work.device.type,
        trace=str(trace) if trace is not None else None)


def write_trace(work: Workload, batches: Iterator[Any], path: Path, steps: int = 3) -> Path:
    """A Chrome trace (chrome://tracing, Perfetto) of a few steps, each phase a named range."""
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if work.device.type == "cuda" else [])
    with profile(activities=activities) as profiler:
        for step in range(steps):
            with record_function(f"step {step}"):
                with record_function("data_wait"):
                    batch = next(batches)
                with record_function("host_to_device"):
                    batch = to_device(work, batch)
                with record_function("forward"):
                    loss = step_loss(work, batch)
                with record_function("backward"):
                    backward(work, loss)
                with record_function("optimizer"):
                    optimizer_step(work)
                with record_function("logging"):
                    float(loss.detach())
    path.parent.mkdir(parents=True, exist_ok=True)
    profiler.export_chrome_trace(str(path))
    return path


def profile_steps(model: torch.nn.Module, data: Any, *, config: Any = None, loss: Any = None,
                  optimizer: Any = None, steps: int = 20,
                  batch_size: int | None = None, trace: str | Path | None = None) -> ProfileResult:
    """`torchwise profile` from Python, on the ``model`` and ``data`` you would give `fit`."""
    from torchwise.tune.workload import from_objects

    work = from_objects(model, data, config=config, loss=loss, optimizer=optimizer)
    return profile_workload(work, steps=steps, batch_size=batch_size,
                            trace=Path(trace) if trace is not None else None)
