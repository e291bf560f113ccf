"""Rules about devices: hard-coded CUDA in a script that is meant to run elsewhere too."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword, method
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.data import argparse_option

# An `if` on one of these decides whether CUDA is there: `if torch.cuda.is_available():`,
# `if args.cuda:`, `if device.type == "cuda":`, `if use_accel:`, `if args.gpu is not None:`,
# and a CPU flag read either way (Pointnet2's `if not args.use_cpu:`).
_DEVICE_CHECK = re.compile(r"cuda|gpu|accel|is_available|device|(^|[\s.(_])(use_|no_|force_)?cpu\b(?!\s*\()", re.I)
_CUDA_TENSOR = re.compile(r"^torch\.cuda\.\w*Tensor$")
# A test that asks whether CUDA is there at all (not how many GPUs): `torch.cuda.is_available()`,
# `use_cuda`, `args.cuda`, `not args.no_cuda`, `if gpu:`, a GPU count against zero
# (`args.ngpu > 0`, outlier-exposure's "--ngpu: 0 = CPU"); `device_count() > 1` is not one.
_AVAILABILITY = re.compile(
    r"is_available|(^|[\s.(_])(no_)?(cuda|gpu|gpus)($|[\s)])|(^|[\s.(_])(n_?|num_?)gpus?\s*(>\s*0|>=\s*1|!=\s*0)\b",
    re.I,
)


def _defines_device(ctx: FileContext) -> bool:
    """A ``device`` the script sets itself (an assignment, or a ``--device`` option declared
    here) and moves things with."""
    if any(key.rsplit(".", 1)[-1] == "device" for key in ctx.assignments):
        return True
    return _moves_to_device(ctx) and argparse_option(ctx, "device") is not None


def _moves_to_device(ctx: FileContext) -> bool:
    """``.to(device)`` / ``.to(args.device)`` somewhere in the file."""
    return any(method(c) == "to" and c.args and (dotted(c.args[0]) or "").endswith("device") for c in ctx.calls)


def _cuda_only(ctx: FileContext) -> bool:
    """An NCCL process group with ``torch.cuda.set_device(rank)``, or a ``set_device`` that no
    availability check guards (Person_reID's ``if len(gpu_ids) > 0:`` on the default
    ``--gpu_ids 0``): the script cannot run without CUDA, so its ``.cuda()`` is honest."""
    set_devices = [c for c in ctx.calls if (ctx.qualname(c.func) or "").endswith("cuda.set_device")]
    if not set_devices:
        return False
    offers_cpu = _offers_cpu(ctx)
    # A set_device on a branch of a script that offers a CPU path binds that branch only (SimCLR).
    unguarded = [c for c in set_devices if not _behind_device_check(ctx, c, _AVAILABILITY)]
    if any(not (offers_cpu and _on_a_branch(ctx, c)) for c in unguarded):
        return True
    for call in ctx.calls:
        if offers_cpu and _on_a_branch(ctx, call):
            continue
        if (ctx.qualname(call.func) or "").endswith("init_process_group"):
            backend = keyword(call, "backend") or (call.args[0] if call.args else None)
            if isinstance(backend, ast.Constant) and backend.value == "nccl":
                return True
    return False


def _on_a_branch(ctx: FileContext, node: ast.AST) -> bool:
    """Under an ``if`` that is not about devices (SimCLR's ``if args.nodes > 1:``): the CUDA it
    needs is that branch's (a multi-node run), not the whole script's."""
    return any(isinstance(a, ast.If) and not _DEVICE_CHECK.search(ast.unparse(a.test)) for a in ctx.ancestors(node))


def _behind_device_check(ctx: FileContext, node: ast.AST, pattern: re.Pattern[str] = _DEVICE_CHECK) -> bool:
    """Inside ``if <a CUDA check>:`` (either branch) or ``x if cuda else y``."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.If | ast.IfExp | ast.While):
            if pattern.search(ast.unparse(ancestor.test)):
                if pattern is _AVAILABILITY and _picks_a_gpu(ctx, ancestor.test):
                    continue
                return True
    return False


def _picks_a_gpu(ctx: FileContext, test: ast.expr) -> bool:
    """``args.gpu is not None`` where the file hands ``args.gpu`` to ``.cuda(...)`` or
    ``set_device(...)``: a GPU index tested against None chooses one GPU against all of them
    (pytorch/examples' imagenet main.py, where None means DataParallel over every GPU); it does
    not ask whether there is a GPU, so it is no CPU path."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is | ast.IsNot)):
        return False
    name = dotted(test.left)
    if name is None or not is_constant(test.comparators[0], None):
        return False
    return any(
        call.args
        and dotted(call.args[0]) == name
        and (method(call) == "cuda" or (ctx.qualname(call.func) or "").endswith("cuda.set_device"))
        for call in ctx.calls
    )


def _checks_availability(ctx: FileContext) -> bool:
    """Some ``.cuda()`` in the file runs only when CUDA is there: the file means to run without it."""
    return any(method(c) == "cuda" and _behind_device_check(ctx, c, _AVAILABILITY) for c in ctx.calls)


# `--no-cuda`, `--no_cuda`, `--cpu`, `--disable-cuda`: an option to run without a GPU.
_CPU_OPTION = re.compile(r"^--(no[-_]?cuda|cpu|use[-_]cpu|disable[-_]cuda|no[-_]gpu)$", re.I)


def _offers_cpu(ctx: FileContext) -> bool:
    """An option to run on the CPU (PyTorch-Encoding's ``--no-cuda``, whose ``args.cuda`` guards
    only the loader's ``pin_memory``), or CUDA's availability read into a flag
    (``use_cuda = torch.cuda.is_available()``): the script means to run without a GPU."""
    for call in ctx.calls:
        if method(call) == "add_argument" and any(
            isinstance(a, ast.Constant) and _CPU_OPTION.match(str(a.value)) for a in call.args
        ):
            return True
        if (ctx.qualname(call.func) or "").endswith("cuda.is_available"):
            statement = ctx.statement(call)
            if isinstance(statement, ast.Assign) and not isinstance(ctx.parents.get(call), ast.Call):
                return True
    return False


def _refuses_cpu(ctx: FileContext) -> bool:
    """``if not torch.cuda.is_available(): raise ...`` / ``else: raise NotImplementedError("needs a
    GPU")`` / ``assert torch.cuda.is_available()``: CUDA-only by design, and it says so."""
    for node in ctx.nodes:
        if isinstance(node, ast.Assert) and _AVAILABILITY.search(ast.unparse(node.test)):
            return True
        # Only a test on availability alone: `if args.cuda and not is_available(): raise` refuses
        # a flag, not the CPU.
        if isinstance(node, ast.If) and not isinstance(node.test, ast.BoolOp):
            if _AVAILABILITY.search(ast.unparse(node.test)) and any(map(_stops, [*node.body, *node.orelse])):
                return True
    return False


def _stops(statement: ast.stmt) -> bool:
    """``raise ...`` or ``sys.exit(...)``."""
    if isinstance(statement, ast.Raise):
        return True
    call = statement.value if isinstance(statement, ast.Expr) else None
    return isinstance(call, ast.Call) and (dotted(call.func) or "").endswith("exit")


def _is_cuda_string(node: ast.AST | None) -> bool:
    """``"cuda"``, ``"cuda:0"``."""
    return isinstance(node, ast.Constant) and str(node.value).startswith("cuda")


def _inside_device_constructor(ctx: FileContext, node: ast.AST) -> bool:
    """``torch.device("cuda")`` and ``device = "cuda" ...`` define the device; they are fine."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.Call) and (ctx.qualname(ancestor.func) or "") == "torch.device":
            return True
        if isinstance(ancestor, ast.Assign):
            return any((dotted(t) or "").endswith("device") for t in ancestor.targets)
        if isinstance(ancestor, ast.stmt):
            return False
    return False


@rule("TW108", Level.WARNING, hint="use .to(device) everywhere; define device once")
def hard_coded_cuda(ctx: FileContext) -> Iterator[Hit]:
    """Hard-coded ``.cuda()`` / ``device="cuda"`` in a file with a ``device`` or a CUDA check.

    Why: the script half-follows ``device`` (or ``if use_cuda:``): it runs on one GPU but
    crashes on a CPU-only machine, and under DDP the ``.cuda()`` tensors land on GPU 0
    instead of the rank's GPU.
    Fix: move everything with ``.to(device)`` (and build tensors with ``device=device``), or
    put the unguarded ``.cuda()`` under the same check as the others.
    Without a ``device`` variable it reports a ``.cuda()`` that skips the availability check
    the rest of the file makes: only in a file where another
    ``.cuda()`` sits under ``if torch.cuda.is_available():`` / ``if use_cuda:`` /
    ``if args.cuda:``; a file that makes no such check, or refuses to run without CUDA
    (``else: raise ...``, ``assert torch.cuda.is_available()``), is CUDA-only by design. A file
    that moves data with ``.to(args.device)`` but neither sets that device nor checks for CUDA
    gets its device from another file (LoRA's ``parse_gpu``): whether it offers a CPU path is
    out of sight, so its ``.cuda()`` is info.
    A ``set_device`` or an NCCL process group under an ``if`` that is not about devices (SimCLR's
    ``if args.nodes > 1:``) in a script that chooses its device by CUDA's availability binds that
    branch only: the script still offers a CPU path.
    Cannot see: a ``.cuda()`` inside a helper that only CUDA callers reach; it trusts any
    ``if`` that mentions cuda/gpu/device, and scripts that call ``torch.cuda.set_device``
    outside an availability check (NCCL ranks, a ``--gpu_ids`` default): CUDA-only by design.
    """
    if _cuda_only(ctx) or _refuses_cpu(ctx):
        return
    with_device = _defines_device(ctx)
    if not with_device and not _checks_availability(ctx) and not _offers_cpu(ctx):
        if _moves_to_device(ctx):  # LoRA's gpt2_ft.py: args.device comes from gpu.py's parse_gpu
            for call in ctx.calls:
                if method(call) == "cuda" and not _behind_device_check(ctx, call):
                    where = "the file's .to(device) uses a device set where lint cannot read it"
                    yield Hit(call, f".cuda() hard-codes the device; {where}", level=Level.INFO)
        return
    for call in ctx.calls:
        if _behind_device_check(ctx, call):
            continue
        if method(call) == "cuda":
            why = "this file also uses a device variable" if with_device else "other .cuda() calls check for CUDA"
            yield Hit(call, f".cuda() hard-codes the device; {why}")
        elif not with_device:
            continue
        elif method(call) == "to" and call.args and _is_cuda_string(call.args[0]):
            if not _inside_device_constructor(ctx, call):
                yield Hit(call, '.to("cuda") hard-codes the device; use .to(device)')
        for kw in call.keywords:
            if kw.arg == "device" and _is_cuda_string(kw.value):
                if not _inside_device_constructor(ctx, call):
                    yield Hit(kw.value, 'device="cuda" hard-codes the device; use device=device')


@rule(
    "TW128",
    Level.WARNING,
    hint="build tensors with torch.zeros(..., device=device) or x.new_zeros(...)",
)
def unconditional_cuda_tensor_type(ctx: FileContext) -> Iterator[Hit]:
    """``torch.cuda.FloatTensor`` (or another ``torch.cuda.*Tensor``) used with no CUDA check.

    Why: the legacy typed constructors exist only with CUDA: on a CPU-only machine the line
    fails ("type torch.cuda.FloatTensor not available"), and ``x.type(torch.cuda.FloatTensor)``
    silently copies to GPU 0 whatever the rank.
    Fix: ``torch.zeros(shape, device=device)`` / ``x.to(device, torch.float32)``; or keep the
    usual guard ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``.
    As TW108 does, it warns only in a file that offers a CPU path (a device variable, a CUDA
    availability check or flag); in a file with none, CUDA-only as written, it is info.
    Cannot see: a check made in another function or file (``assert torch.cuda.is_available()``
    elsewhere).
    """
    if _cuda_only(ctx) or _refuses_cpu(ctx):
        return
    offers_cpu = (
        _defines_device(ctx)
        or _checks_availability(ctx)
        or any((ctx.qualname(c.func) or "").endswith("cuda.is_available") for c in ctx.calls)
    )
    for node in ctx.nodes:
        if not isinstance(node, ast.Attribute) or isinstance(ctx.parents.get(node), ast.Attribute):
            continue
        name = ctx.qualname(node) or ""
        if _CUDA_TENSOR.match(name) and not _behind_device_check(ctx, node):
            message = f"{name} exists only with CUDA and is used here without a CUDA check"
            if offers_cpu:
                yield Hit(node, message)
            else:
                yield Hit(node, f"{message} (the file offers no CPU path: CUDA-only as written)", level=Level.INFO)
