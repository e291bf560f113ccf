"""`tune memory`: how many bytes a training step needs, part by part, before you run it.

Parameters, gradients and optimizer state are counted exactly (distinct storages, their real
dtypes, the optimizer's own state after a real step). Activations are the tensors autograd
saves for backward, seen through `torch.autograd.graph.saved_tensors_hooks` and counted once
per storage. The peak comes from two real steps on small micro-batches (``probe_sizes``,
default 2 and 4 samples): `LiveMemory` records the live bytes after every op of each step, and
since the same ops run at every batch size, each point of the step is a line in the batch size;
the predicted peak for the configured batch is the largest point of the extrapolated step. The
same measurement under bf16 autocast, with smaller micro-batches and with activation
checkpointing gives what each would save.

>>> import torch
>>> from torch.utils.data import TensorDataset
>>> data = TensorDataset(torch.randn(64, 32), torch.randint(0, 4, (64,)))
>>> estimate = estimate_memory(torch.nn.Linear(32, 4), data, batch_size=64, bf16=False)
>>> estimate.parameters, estimate.gradients, estimate.optimizer_state   # AdamW: 2 moments + 2 step counters
(528, 528, 1064)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from torchwise.data.batch import count_samples, tensors
from torchwise.tune.state import preserved
from torchwise.tune.tracker import LiveMemory, storage_bytes
from torchwise.tune.workload import Workload, backward, optimizer_step, sample_batch, step_loss, train_step

PHASES = ("forward", "backward", "optimizer")


@dataclass
class StepTrace:
    """Live bytes after every op of one real training step at ``batch_size`` samples."""

    batch_size: int
    timeline: list[int]
    phase_starts: dict[str, int]  # index into the timeline where each phase begins
    activations: int  # bytes autograd saved for backward (distinct storages, no parameters)
    batch_bytes: int
    top_level: dict[str, int] = field(default_factory=dict)  # saved bytes per top-level child
    boundaries: int = 0  # bytes of the inputs handed to each top-level child

    def phase_of(self, index: int) -> str:
        names = [p for p in PHASES if self.phase_starts[p] <= index]
        return names[-1] if names else PHASES[0]


@dataclass
class Saving:
    """One way to lower the peak: what to change, and the predicted peak after it."""

    change: str
    config: str
    predicted_peak_bytes: int


@dataclass
class MemoryEstimate:
    """The parts of a step's memory and its predicted peak at ``batch_size`` (JSON: `to_dict`)."""

    batch_size: int
    precision: str
    device: str
    parameters: int
    gradients: int
    optimizer_state: int
    activations: int
    activations_per_sample: float
    batch: int
    predicted_peak_bytes: int
    peak_phase: str
    probe_sizes: tuple[int, int]
    savings: list[Saving] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def model_state_tensors(work: Workload) -> list[torch.Tensor]:
    return [*work.model.parameters(), *work.model.buffers()]


def optimizer_tensors(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    return [v for state in optimizer.state.values() for v in state.values() if isinstance(v, torch.Tensor)]


def gradient_bytes(work: Workload) -> int:
    """What backward allocates for the trainable parameters: one gradient each, in its dtype."""
    return storage_bytes(p for p in work.params if p.requires_grad)


def trace_step(work: Workload, batch_size: int, *, offset: int = 0) -> StepTrace:
    """One real step at ``batch_size`` samples with the live bytes recorded after every op."""
    batch = sample_batch(work, batch_size, offset=offset)
    work.optimizer.zero_grad(set_to_none=True)
    owned = {id(t.untyped_storage()) for t in model_state_tensors(work)}
    owned |= {id(t.untyped_storage()) for t in tensors(batch)}
    saved: dict[int, int] = {}
    per_child: dict[str, int] = {}
    boundaries: list[int] = [0]
    running: list[str] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if id(storage) not in owned and id(storage) not in saved:
            saved[id(storage)] = storage.nbytes()
            if running:
                per_child[running[-1]] = per_child.get(running[-1], 0) + storage.nbytes()
        return tensor

    handles = []
    for name, child in work.model.named_children():
        def enter(_: Any, args: Any, name: str = name) -> None:
            running.append(name)
            boundaries[0] += storage_bytes(t for t in args if isinstance(t, torch.Tensor))

        def leave(*_: Any) -> None:  # a forward hook that returned a value would replace the output
            running.pop()

        handles.append(child.register_forward_pre_hook(enter))
        handles.append(child.register_forward_hook(leave))
    existing = [*model_state_tensors(work), *optimizer_tensors(work.optimizer), *tensors(batch)]
    try:
        with LiveMemory(existing, record_timeline=True) as memory:
            memory.mark("forward")
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                loss = step_loss(work, batch)
            memory.mark("backward")
            backward(work, loss)
            del loss
            memory.mark("optimizer")
            optimizer_step(work)
    finally:
        for handle in handles:
            handle.remove()
    starts = {label: i for i, label in enumerate(memory.ops) if label in PHASES}
    return StepTrace(batch_size=count_samples(batch), timeline=memory.timeline, phase_starts=starts,
                     activations=sum(saved.values()), batch_bytes=storage_bytes(tensors(batch)),
                     top_level=per_child, boundaries=boundaries[0])


def measured_peak(work: Workload, batch_size: int) -> int:
    """The peak live bytes of one real step at ``batch_size`` (after a warm-up step), restored after."""
    with preserved(work.model, work.optimizer, work.scheduler):
        train_step(work, sample_batch(work, batch_size))
        return max(trace_step(work, batch_size).timeline)


def _line(small: float, large: float, b1: int, b2: int, at: float) -> float:
    return small + (large - small) * (at - b1) / (b2 - b1)


def extrapolate(first: StepTrace, second: StepTrace, at: float, *, extra_in_forward: int = 0) -> tuple[int, str]:
    """The predicted peak at ``at`` samples and the phase it falls in; ``extra_in_forward`` adds
    bytes held through forward and backward (gradients kept by accumulation)."""
    b1, b2 = first.batch_size, second.batch_size
    if len(first.timeline) == len(second.timeline):  # the same ops: extrapolate point by point
        best, where = -1.0, 0
        for i, (small, large) in enumerate(zip(first.timeline, second.timeline, strict=True)):
            value = _line(small, large, b1, b2, at)
            if extra_in_forward and i < second.phase_starts["optimizer"]:
                value += extra_in_forward
            if value > best:
                best, where = value, i
        return int(best), second.phase_of(where)
    # The op sequence changed with the batch size: extrapolate each phase's own peak instead.
    peaks = {}
    for phase in PHASES:
        def peak(trace: StepTrace, phase: str = phase) -> int:
            start = trace.phase_starts[phase]
            later = [trace.phase_starts[p] for p in PHASES if trace.phase_starts[p] > start]
            return max(trace.timeline[start:min(later, default=len(trace.timeline))] or [0])

        extra = extra_in_forward if phase != "optimizer" else 0
        peaks[phase] = _line(peak(first), peak(second), b1, b2, at) + extra
    phase = max(peaks, key=peaks.__getitem__)
    return int(peaks[phase]), phase


def probe(work: Workload, sizes: tuple[int, int]) -> tuple[StepTrace, StepTrace]:
    train_step(work, sample_batch(work, sizes[1]))  # optimizer state exists from here on
    return trace_step(work, sizes[0]), trace_step(work, sizes[1])


def estimate_workload(work: Workload, *, batch_size: int | None = None, probe_sizes: tuple[int, int] = (2, 4),
                      bf16: bool = True) -> MemoryEstimate:
    """The estimate for a `Workload`; the model, optimizer and RNGs are left exactly as they were."""
    batch_size = batch_size or work.cfg.train.batch_size
    b1, b2 = sorted(probe_sizes)
    with preserved(work.model, work.optimizer, work.scheduler):
        first, second = probe(work, (b1, b2))
        optimizer_state = storage_bytes(optimizer_tensors(work.optimizer))
        alternatives = {}
        if bf16 and work.precision.name == "fp32":
            alternatives["bf16"] = _under_bf16(work, (b1, b2))
    parameters = storage_bytes(model_state_tensors(work))
    gradients = gradient_bytes(work)
    peak, phase = extrapolate(first, second, batch_size)
    slope = (second.activations - first.activations) / (b2 - b1)
    activations = int(_line(first.activations, second.activations, b1, b2, batch_size))
    accumulate = work.cfg.train.accumulate
    savings = []
    for pieces in (2, 4):
        micro = batch_size // pieces
        if micro >= 1:
            smaller, _ = extrapolate(first, second, micro, extra_in_forward=gradients)
            savings.append(Saving(f"micro-batch {micro} x accumulate {accumulate * pieces} (same effective batch)",
                                  f"train.batch_size={micro} train.accumulate={accumulate * pieces}", smaller))
    half, _ = extrapolate(first, second, max(1, batch_size // 2))
    savings.append(Saving(f"batch {max(1, batch_size // 2)} (half the effective batch)",
                          f"train.batch_size={max(1, batch_size // 2)}", half))
    if "bf16" in alternatives:
        low = alternatives["bf16"]
        savings.append(Saving("bf16 autocast", "train.precision=bf16", extrapolate(*low, batch_size)[0]))
    checkpointed = _checkpointing(first, second, batch_size, peak, phase)
    if checkpointed is not None:
        savings.append(Saving("checkpoint each top-level block (about)",
                              "torch.utils.checkpoint in forward()", checkpointed))
    return MemoryEstimate(batch_size=batch_size, precision=work.precision.name, device=work.device.type,
                          parameters=parameters, gradients=gradients, optimizer_state=optimizer_state,
                          activations=activations, activations_per_sample=slope,
                          batch=int(_line(first.batch_bytes, second.batch_bytes, b1, b2, batch_size)),
                          predicted_peak_bytes=peak, peak_phase=phase, probe_sizes=(b1, b2), savings=savings)


def _under_bf16(work: Workload, sizes: tuple[int, int]) -> tuple[StepTrace, StepTrace]:
    from torchwise.train.precision import Precision

    fp32 = work.precision
    work.precision = Precision("bf16", work.device.type)
    try:
        return probe(work, sizes)
    finally:
        work.precision = fp32


def _checkpointing(first: StepTrace, second: StepTrace, batch_size: int, peak: int, phase: str) -> int | None:
    """About what checkpointing each top-level child saves: its activations are dropped except
    its inputs, and one child's are rebuilt at a time during backward."""
    if len(second.top_level) < 2 or phase == "optimizer":
        return None
    b1, b2 = first.batch_size, second.batch_size
    kept = _line(first.boundaries, second.boundaries, b1, b2, batch_size)
    largest = max(_line(first.top_level.get(k, 0), v, b1, b2, batch_size) for k, v in second.top_level.items())
    total = _line(first.activations, second.activations, b1, b2, batch_size)
    return int(peak - max(0.0, total - kept - largest))


def estimate_memory(model: torch.nn.Module, data: Any, *, batch_size: int | None = None, config: Any = None,
                    loss: Any = None, optimizer: Any = None,
                    probe_sizes: tuple[int, int] = (2, 4), bf16: bool = True) -> MemoryEstimate:
    """`tune memory` from Python: ``model`` and ``data`` (a Dataset or DataLoader) as `fit` takes them."""
    from torchwise.tune.workload import from_objects

    work = from_objects(model, data, config=config, loss=loss, optimizer=optimizer)
    return estimate_workload(work, batch_size=batch_size, probe_sizes=probe_sizes, bf16=bf16)
