"""TW148: the model's own attribute read through its DataParallel / DDP wrapper, or ``.module``
read where the wrapper was made on one branch only.

>>> from torchwise.lint.engine import lint_source
>>> src = (
...     "import torch\\n"
...     "model = Darknet(cfg)\\n"
...     "if torch.cuda.device_count() > 1:\\n"
...     "    model = torch.nn.DataParallel(model)\\n"
...     "size = (model.width, model.height)\\n"
... )
>>> [(f.code, f.line) for f in lint_source(src)]
[('TW148', 5)]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, method, receiver
from torchwise.lint.context import FileContext, position
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule
from torchwise.lint.rules.callers import handed_params

# What a DataParallel / DistributedDataParallel object answers (torch 2.x, nn.Module's API
# included); every other attribute raises AttributeError: nn.Module.__getattr__ looks only in
# the wrapper's own parameters, buffers and submodules, and the model is the submodule `module`.
WRAPPER_ATTRIBUTES = frozenset(
    "T_destination add_module apply batched_grad_copy bfloat16 broadcast_bucket_size broadcast_buffers "
    "bucket_bytes_cap bucket_bytes_cap_default bucket_bytes_cap_list buffers call_super_init children compile "
    "cpu cuda device device_ids device_type dim double dump_patches eval extra_repr find_unused_parameters "
    "float forward forward_sync_buffers gather get_buffer get_extra_state get_parameter get_submodule "
    "gradient_as_bucket_view half ipu is_multi_device_module join join_device join_hook join_process_group "
    "load_state_dict logger mixed_precision module modules modules_buffers mtia named_buffers named_children "
    "named_module_buffers named_modules named_parameters no_sync output_device parallel_apply parameters "
    "parameters_to_ignore process_group reducer register_backward_hook register_buffer register_comm_hook "
    "register_forward_hook register_forward_pre_hook register_full_backward_hook "
    "register_full_backward_pre_hook register_load_state_dict_post_hook register_load_state_dict_pre_hook "
    "register_module register_parameter register_state_dict_post_hook register_state_dict_pre_hook replicate "
    "require_backward_grad_sync require_forward_param_sync requires_grad_ scatter set_extra_state "
    "set_submodule share_memory skip_all_reduce_unused_params state_dict static_graph to to_empty to_kwargs "
    "train training type use_side_stream_for_tensor_copies will_sync_module_buffers xpu zero_grad".split()
)
_WRAPPER = re.compile(r"^(Distributed)?DataParallel(Model)?$")
# A test that looks at what the object is before reading it.
_CHECKS = re.compile(r"hasattr|isinstance|getattr|\bmodule\b|parallel|DataParallel", re.I)


@rule("TW148", Level.ERROR, hint="read it through model.module (or keep a name for the unwrapped model)")
def wrapper_attribute(ctx: FileContext) -> Iterator[Hit]:
    """A model's own attribute read through its ``DataParallel`` / DDP wrapper, or a ``.module`` it may lack.

    Why: ``nn.DataParallel(model)`` and ``DistributedDataParallel(model)`` are new modules that
    hold the model as ``.module``; ``wrapper.width`` (an attribute of the model's class) raises
    AttributeError, and so does ``model.module`` where the wrapping ran only under an ``if``
    (``if args.cuda:``, ``if device_count() > 1:``) that was false: the script then works on one
    machine and crashes on another (pytorch-YOLOv4's ``model.width`` with two GPUs,
    PyTorch-Encoding's ``self.model.module.state_dict()`` without CUDA).
    Fix: read the model's attributes through ``.module`` (``getattr(model, "module", model)``),
    or keep a name for the bare model.
    It follows a name (or ``self.name`` within a class) from the assignment that wraps it, in
    source order, to the reads after it, and into a function of this file it is handed to;
    a read under a test of what the object is (``hasattr``, ``isinstance``, the wrapping's own
    condition) or after the name is bound again is not reported.
    Cannot see: wrappers made in another file or by a helper, attributes a project's own
    wrapper class forwards (a subclass defined here is not followed), or a branch that is
    always true on the machines the script is meant for.
    """
    for scope in _scopes(ctx):
        yield from _in_scope(ctx, scope)
    yield from _self_attributes(ctx)


def _scopes(ctx: FileContext) -> list[ast.AST]:
    return [ctx.tree, *(n for n in ctx.nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))]


def _is_wrap(ctx: FileContext, value: ast.expr) -> bool:
    """``nn.DataParallel(model)`` (through ``.cuda()`` / ``.to()``), not a class defined here."""
    while isinstance(value, ast.Call) and method(value) in {"cuda", "to"}:
        value = receiver(value)  # type: ignore[assignment]
    if not isinstance(value, ast.Call):
        return False
    last = (ctx.qualname(value.func) or "").rsplit(".", 1)[-1]
    local = {n.name for n in ctx.nodes if isinstance(n, ast.ClassDef)}
    return bool(_WRAPPER.match(last)) and last not in local and bool(value.args)


def _checked(ctx: FileContext, node: ast.AST, wrap_guard: ast.If | None) -> bool:
    """Under a test of what the object is, or of the wrapping's own condition, or in a try."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.If | ast.IfExp | ast.While) and (
            _CHECKS.search(ast.unparse(ancestor.test))
            or (wrap_guard is not None and _condition(ancestor.test) == _condition(wrap_guard.test))
        ):
            return True
        if isinstance(ancestor, ast.Try) and ancestor.handlers:
            return True
        if isinstance(ancestor, ast.BoolOp) and _CHECKS.search(ast.unparse(ancestor)):
            return True
    return False


def _condition(test: ast.expr) -> str:
    """A condition's text with ``self.`` dropped: ``self.args.cuda`` tests what ``args.cuda`` does
    where ``__init__`` stored ``self.args = args`` (Tramac's trainer)."""
    return re.sub(r"\bself\.", "", ast.unparse(test))


def _bindings(ctx: FileContext, scope: ast.AST, name: str) -> list[ast.AST]:
    """Statements (and loop targets, parameters) that bind ``name`` in ``scope``, in order."""
    found: list[ast.AST] = []
    for node in ctx.walk(scope):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(dotted(t) == name for t in targets):
                found.append(node)
        elif isinstance(node, ast.For | ast.With | ast.comprehension) and name in _names_bound(node):
            found.append(node)
    return sorted(found, key=position)


def _names_bound(node: ast.AST) -> set[str]:
    targets: list[ast.AST] = []
    if isinstance(node, ast.For | ast.comprehension):
        targets = [node.target]
    elif isinstance(node, ast.With):
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
    return {dotted(n) or "" for t in targets for n in ast.walk(t)}


def _in_scope(ctx: FileContext, scope: ast.AST) -> Iterator[Hit]:
    for wrap in (n for n in ctx.walk(scope) if isinstance(n, ast.Assign) and _is_wrap(ctx, n.value)):
        for target in wrap.targets:
            name = dotted(target)
            if not isinstance(target, ast.Name) or not name:
                continue
            guard = ctx.enclosing_if(wrap, scope)
            if guard is not None and any(_assigns_wrap(ctx, s, name) for s in guard.orelse):
                guard = None  # wrapped on both branches
            later = [b for b in _bindings(ctx, scope, name) if position(b) > position(wrap)]
            end = position(later[0]) if later else (10**9, 0)
            uses = [n for n in _loads(ctx, scope, name) if position(wrap) < position(n) < end]
            yield from _reports(ctx, uses, name, wrap, guard)
            yield from _handed_on(ctx, scope, name, wrap, end)


def _assigns_wrap(ctx: FileContext, statement: ast.stmt, name: str) -> bool:
    return any(
        isinstance(n, ast.Assign) and _is_wrap(ctx, n.value) and any(dotted(t) == name for t in n.targets)
        for n in ast.walk(statement)
    )


def _reports(
    ctx: FileContext, uses: list[ast.Attribute], name: str, wrap: ast.AST, guard: ast.If | None
) -> Iterator[Hit]:
    assigned = {n.attr for n in ctx.nodes if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
    seen: set[int] = set()
    for use in sorted(uses, key=position):
        line = use.lineno
        if line in seen or _checked(ctx, use, guard) or (guard is not None and _inside(ctx, use, guard)):
            continue
        if use.attr == "module":
            if guard is None:
                continue
            message = f"{name}.module: {name} is wrapped only when the `if` of line {guard.lineno} is true"
        elif use.attr in WRAPPER_ATTRIBUTES or use.attr.startswith("_") or use.attr in assigned:
            continue
        else:
            message = f"{name}.{use.attr} on the {_kind(wrap)} wrapper of line {wrap.lineno}: only {name}.module has it"
        seen.add(line)
        yield Hit(use, message)


def _inside(ctx: FileContext, node: ast.AST, guard: ast.If) -> bool:
    """Within the wrapping ``if`` itself (its body or its ``else``): the branch is known there."""
    return any(a is guard for a in ctx.ancestors(node))


def _kind(wrap: ast.AST) -> str:
    text = ast.unparse(getattr(wrap, "value", wrap))
    return "DistributedDataParallel" if "Distributed" in text or "DDP" in text else "DataParallel"


def _handed_on(ctx: FileContext, scope: ast.AST, name: str, wrap: ast.AST, end: tuple[int, int]) -> Iterator[Hit]:
    """``test(model=model)`` after the wrap: the function's parameter holds the wrapper."""
    for call in ctx.calls_in(scope):
        if not (position(wrap) < position(call) < end):
            continue
        target = ctx.callee(call)
        if target is None:
            continue
        for param in handed_params(call, target, name):
            if _bindings(ctx, target, param):
                continue  # rebound in the function (model = model.module)
            uses = [n for n in _loads(ctx, target, param) if n.attr != "module"]
            yield from _reports(ctx, uses, param, wrap, None)


def _loads(ctx: FileContext, root: ast.AST, name: str) -> list[ast.Attribute]:
    """``name.attr`` read under ``root`` (same function)."""
    return [
        n
        for n in ctx.walk(root)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id == name
        and isinstance(n.ctx, ast.Load)
    ]


def _self_attributes(ctx: FileContext) -> Iterator[Hit]:
    """``self.model = DataParallelModel(self.model)`` under ``if args.cuda:`` in one method,
    ``self.model.module`` unguarded in another (PyTorch-Encoding's trainer)."""
    for cls in (n for n in ctx.nodes if isinstance(n, ast.ClassDef)):
        stores: dict[str, list[ast.Assign]] = {}
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    name = dotted(t) or ""
                    if name.startswith("self.") and name.count(".") == 1:
                        stores.setdefault(name, []).append(node)
        for name, assigns in stores.items():
            wraps = [a for a in assigns if _is_wrap(ctx, a.value)]
            if len(wraps) != 1:
                continue
            wrap = wraps[0]
            method_of = ctx.function(wrap)
            if method_of is None or any(ctx.function(a) is not method_of for a in assigns):
                continue  # bound again in another method: which value a read sees is unknown
            guard = ctx.enclosing_if(wrap, method_of)
            if guard is None:
                continue
            uses = [
                n
                for n in ast.walk(cls)
                if isinstance(n, ast.Attribute)
                and n.attr == "module"
                and dotted(n.value) == name
                and ctx.function(n) is not method_of
            ]
            yield from _reports(ctx, uses, name, wrap, guard)
