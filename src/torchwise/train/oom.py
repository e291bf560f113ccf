"""The out-of-memory guard the loop calls by name: shrink the micro-batch and retry the step."""

from __future__ import annotations

import gc
import math
from typing import TYPE_CHECKING

import torch

from torchwise.data.batch import count_samples, slice_batch
from torchwise.errors import RunFailed

if TYPE_CHECKING:
    from torchwise.train.context import Batch, LoopContext, LoopState


def shrink_after_oom(ctx: LoopContext, state: LoopState, window: list[Batch]) -> None:
    """Out of memory: free what we can and run each micro-batch in twice as many pieces.

    The loader, the window and the weighting stay as they were, so the effective batch and
    the samples of every step are unchanged; only the size of one forward/backward halves.
    """
    batch_size = max(count_samples(batch) for batch in window)
    old_piece = math.ceil(batch_size / state.micro_splits)
    # Gradients of a half-done backward hold memory and would be added to the retry's.
    ctx.optimizer.zero_grad(set_to_none=True)
    if ctx.scaler.is_enabled():
        # An OOM after unscale_ leaves the scaler expecting update(); the retry starts over.
        ctx.scaler._per_optimizer_states.clear()
    gc.collect()
    if ctx.device.type == "cuda":
        torch.cuda.empty_cache()
    if old_piece <= 1:
        raise RunFailed(f"out of memory at step {state.step} even with a micro-batch of 1 sample",
                        hint="use a smaller model, train.precision=bf16, or a device with more memory")
    old_splits = state.micro_splits
    state.micro_splits *= 2
    new_piece = math.ceil(batch_size / state.micro_splits)
    accumulate = ctx.cfg.train.accumulate
    ctx.run.log_event("oom_retry", step=state.step, micro_batch=[old_piece, new_piece],
                      accumulate=[accumulate * old_splits, accumulate * state.micro_splits],
                      effective_batch=batch_size * accumulate)
    ctx.progress.message(f"out of memory at step {state.step}: micro-batch {old_piece} -> {new_piece}, "
                         f"accumulate {accumulate * old_splits} -> {accumulate * state.micro_splits} "
                         "(same effective batch); retrying")


def split_pieces(window: list[Batch], *, batch_size: int, splits: int) -> list[Batch]:
    """The window's micro-batches cut into pieces of ``ceil(batch_size / splits)`` samples
    (a short last batch gives fewer pieces, as a loader of that batch size would)."""
    size = math.ceil(batch_size / splits)
    return [slice_batch(batch, start, start + size) for batch in window
            for start in range(0, count_samples(batch), size)]
