"""TW142: gradients clipped before the backward that makes them; TW146: clipped on every micro-batch
of a gradient accumulation.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "import torch\\n"
...     "for x, y in loader:\\n"
...     "    optimizer.zero_grad()\\n"
...     "    loss = criterion(model(x), y)\\n"
...     "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\\n"
...     "    loss.backward()\\n"
...     "    optimizer.step()\\n"
... )
>>> [(f.code, f.line) for f in lint_source(src, config=None) if f.code == "TW142"]
[('TW142', 5)]
"""

from __future__ import annotations

from collections.abc import Iterator

from torchwise.lint.context import FileContext, position
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule

# The clipping calls, the deprecated clip_grad_norm alias included (amp.py's TW106 reads them too).
CLIPS = frozenset(
    {"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad_value_"}
)


@rule("TW142", Level.WARNING, hint="clip after loss.backward() and before optimizer.step()")
def clip_before_backward(ctx: FileContext) -> Iterator[Hit]:
    """Gradient clipping before the ``backward()`` of the same step.

    Why: clipping acts on the gradients that are there when it runs; before this step's
    ``backward()`` those are zero (just after ``zero_grad()``) or the last step's, so the
    gradients ``optimizer.step()`` applies are never clipped (TCN's copy-memory test clips, then
    backpropagates).
    Fix: ``loss.backward()``, then ``clip_grad_norm_(...)``, then ``optimizer.step()``.
    It reports a clip in a loop whose iteration runs a ``backward()`` after it and before the
    optimizer step, with no ``backward()`` before it in that iteration.
    Cannot see: a backward or step made in a helper of another file.
    """
    for call in ctx.calls:
        if (ctx.qualname(call.func) or "") not in CLIPS:
            continue
        loops = ctx.loops(call)
        if not loops:
            continue
        inside = ctx.calls_in(loops[0])
        backwards = [position(c) for c in inside if ctx.is_backward(c)]
        steps = [position(c) for c in inside if ctx.is_optimizer_step(c)]
        here = position(call)
        after = [b for b in backwards if b > here]
        if after and not any(b < here for b in backwards) and any(s > min(after) for s in steps):
            yield Hit(call, "gradients are clipped before this step's backward(): the step applies them unclipped")


@rule("TW146", Level.WARNING, hint="clip once per optimizer step: move the clip under the same `if` as step()")
def clip_every_micro_batch(ctx: FileContext) -> Iterator[Hit]:
    """Gradient clipping on every micro-batch of a gradient accumulation.

    Why: with ``step()`` under ``if (i + 1) % k == 0`` the gradients add up over k backwards; a
    clip after each backward clips the partial sums, and the micro-batches added after it go in
    unclipped, so the applied gradient is neither the clipped sum nor the true one
    (Bert-Multi-Label-Text-Classification's trainer clips after every ``backward()``).
    Fix: clip once, just before ``optimizer.step()``, under the same condition.
    It reports a clip in a loop whose every optimizer step sits under a ``%`` condition that
    the clip and the loop's ``backward()`` are outside of.
    Cannot see: a step or clip made in a helper of another file; a clip of another model than the
    one the guarded optimizer steps (GANs that step one network every k batches).
    """
    for call in ctx.calls:
        if (ctx.qualname(call.func) or "") not in CLIPS:
            continue
        loops = ctx.loops(call)
        if not loops or ctx.under_modulo(call, loops[0]):
            continue
        inside = ctx.calls_in(loops[0])
        steps = [c for c in inside if ctx.is_optimizer_step(c)]
        backwards = [c for c in inside if ctx.is_backward(c)]
        if not steps or not backwards or any(ctx.under_modulo(b, loops[0]) for b in backwards):
            continue
        if all(ctx.under_modulo(s, loops[0]) for s in steps):
            message = "gradients are clipped on every micro-batch, but the optimizer steps every few"
            yield Hit(call, f"{message}: the partial sums are clipped")
