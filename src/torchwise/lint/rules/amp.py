"""Rules about mixed precision: GradScaler with clipping, the deprecated torch.cuda.amp API."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import method
from torchwise.lint.context import FileContext, position
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.findings import Edit, Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.clipping import CLIPS

_DEPRECATED = {"torch.cuda.amp.autocast": "autocast", "torch.cuda.amp.GradScaler": "GradScaler"}


def _uses_scaler(ctx: FileContext, call: ast.Call) -> bool:
    return method(call) in {"scale", "step", "update"} and ctx.kind(receiver_of(call)) == "scaler"


def _in_the_unscaled_branch(ctx: FileContext, clip: ast.Call, region: ast.AST) -> bool:
    """``if use_amp: <scaler> else: loss.backward(); clip(...)``: the clip in the branch
    without the scaler never sees scaled gradients."""
    child: ast.AST = clip
    for ancestor in ctx.ancestors(clip):
        if ancestor is region:
            return False
        if isinstance(ancestor, ast.If):
            mine, other = (
                (ancestor.orelse, ancestor.body)
                if any(child is n for n in ancestor.orelse)
                else (ancestor.body, ancestor.orelse)
            )
            scaled_here = any(_uses_scaler(ctx, c) for n in mine for c in ctx.calls_in(n))
            scaled_there = any(_uses_scaler(ctx, c) for n in other for c in ctx.calls_in(n))
            if scaled_there and not scaled_here:
                return True
        child = ancestor
    return False


@rule("TW106", Level.ERROR, hint="call scaler.unscale_(optimizer) right before clipping")
def clip_before_unscale(ctx: FileContext) -> Iterator[Hit]:
    """Gradient clipping in a GradScaler loop with no ``scaler.unscale_(optimizer)`` first.

    Why: under a GradScaler the gradients are multiplied by the loss scale (65536 at first),
    so ``max_norm=1.0`` clips gradients that are really tiny: the clip threshold is
    meaningless and training silently changes.
    Fix: ``scaler.unscale_(optimizer)`` after backward and before ``clip_grad_norm_``.
    Cannot see: a scaler created with ``enabled=False`` (its scale is 1) or one passed in
    under a name that does not say "scaler"; an ``unscale_`` made inside a helper function
    (it asks for the call in the loop itself).
    """
    for clip in ctx.calls:
        if (ctx.qualname(clip.func) or "") not in CLIPS:
            continue
        loops = ctx.loops(clip)
        region = loops[0] if loops else ctx.scope_of(clip)
        calls = ctx.calls_in(region)
        scaled = any(_uses_scaler(ctx, c) for c in calls)
        unscaled = any(method(c) == "unscale_" and position(c) < position(clip) for c in calls)
        if scaled and not unscaled and not _in_the_unscaled_branch(ctx, clip, region):
            yield Hit(
                clip, "gradients are clipped while still multiplied by the GradScaler's scale"
            )


def _open_paren(ctx: FileContext, call: ast.Call) -> tuple[int, int] | None:
    """The position just after the ``(`` of a call (a UTF-8 byte column, like ``ast``'s)."""
    line, col = call.func.end_lineno, call.func.end_col_offset
    if line is None or col is None:
        return None
    text = ctx.source.splitlines()[line - 1].encode("utf-8")
    index = text.find(b"(", col)
    return (line, index + 1) if index >= 0 and not text[col:index].strip() else None


def _device_edit(ctx: FileContext, call: ast.Call, name: str) -> Edit | None:
    """Insert the ``"cuda"`` device type that the ``torch.amp`` API takes first."""
    if name == "autocast" and call.args:
        return None  # torch.cuda.amp.autocast's positionals do not line up with torch.amp's
    at = _open_paren(ctx, call)
    if at is None:
        return None
    return Edit.insert(at, '"cuda", ' if call.args or call.keywords else '"cuda"')


def _calls_of(ctx: FileContext, node: ast.AST) -> ast.Call | None:
    parent = ctx.parents.get(node)
    return parent if isinstance(parent, ast.Call) and parent.func is node else None


@rule(
    "TW117",
    Level.WARNING,
    hint='use torch.amp.autocast("cuda", ...) / torch.amp.GradScaler("cuda")',
)
def deprecated_cuda_amp(ctx: FileContext) -> Iterator[Hit]:
    """Deprecated ``torch.cuda.amp.autocast`` / ``torch.cuda.amp.GradScaler``.

    Why: both are deprecated since torch 2.4 and warn on every use; the ``torch.amp``
    versions take the device type, so the same code runs on CPU, CUDA, XPU and MPS.
    Fix: ``torch.amp.autocast("cuda", ...)`` and ``torch.amp.GradScaler("cuda")``
    (``torchwise lint --fix`` rewrites them).
    Cannot see: the API reached through other aliases of ``torch.cuda`` (``cuda.amp``).
    """
    for node in ctx.nodes:
        if isinstance(node, ast.ImportFrom) and node.module == "torch.cuda.amp":
            yield _import_hit(ctx, node)
        elif isinstance(node, ast.Attribute) and ctx.qualname(node) in _DEPRECATED:
            name = _DEPRECATED[ctx.qualname(node) or ""]
            edits: list[Edit] = []
            if (ast.unparse(node)).startswith("torch.cuda.amp."):
                edits.append(Edit.replace(node, f"torch.amp.{name}"))
                call = _calls_of(ctx, node)
                device = _device_edit(ctx, call, name) if call else None
                edits.extend([device] if device else [])
            yield Hit(node, f"torch.cuda.amp.{name} is deprecated", edits=tuple(edits))


def _import_hit(ctx: FileContext, node: ast.ImportFrom) -> Hit:
    local = {alias.asname or alias.name: alias.name for alias in node.names}
    edits: list[Edit] = []
    # Rewrite only what we can rewrite whole: a one-line import of autocast/GradScaler.
    if node.lineno == node.end_lineno and set(local.values()) <= set(_DEPRECATED.values()):
        rewritten = ast.ImportFrom(module="torch.amp", names=node.names, level=0)
        edits.append(Edit.replace(node, ast.unparse(rewritten)))
        for call in ctx.calls:
            name = local.get(call.func.id) if isinstance(call.func, ast.Name) else None
            device = _device_edit(ctx, call, name) if name else None
            edits.extend([device] if device else [])
    names = ", ".join(alias.name for alias in node.names)
    return Hit(node, f"imports {names} from the deprecated torch.cuda.amp", edits=tuple(edits))
