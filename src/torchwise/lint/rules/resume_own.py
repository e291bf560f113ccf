"""A weights load that reads back what this script itself saves while it trains: the same path
(by its template) that a ``torch.save`` of the training writes, loaded before any such save of the
run and followed by training. It continues this script's own run, whatever its option is called
(DDPG's ``if args.load: agent.load()`` reads ``directory + 'actor.pth'``, which ``agent.save()``
writes every few episodes), so what the script trains and never saves is lost on it. A file written
only when a score beats the best so far, with no epoch, step or optimizer in it, is a warm start
from the best weights, not a resume (``best_saves``). A path given by an option counts when what
is read out of it is this file's own checkpoint format: two or more keys, all of them keys of a dict
this file saves while it trains (vq-vae-2's ``ckpt['model']`` and ``ckpt['args']``, saved as
``{'model': ..., 'args': args}`` every epoch)."""

from __future__ import annotations

import ast

from torchwise.lint.ast_names import dotted, method
from torchwise.lint.context import FileContext, position
from torchwise.lint.rules.best_saves import best_only
from torchwise.lint.rules.callers import call_sites
from torchwise.lint.rules.checkpoint import file_argument, path_text, same_run_before, saves_with_paths
from torchwise.lint.rules.resume_sites import trains_after


def resumes_own_checkpoint(ctx: FileContext, load: ast.Call) -> bool:
    """``load`` restores weights from a ``torch.load`` of a path this file saves to (other than
    only its best weights), no save of it runs before the load in the same run, and training
    follows the load (in its scope, or after a call here of the function it sits in)."""

    for read in torch_loads_feeding(ctx, load):
        path = path_text(ctx, file_argument(read))
        saves = [save for save, saved in saves_with_paths(ctx) if path is not None and saved == path]
        saves = saves or _same_format(ctx, read)
        if not saves or any(same_run_before(ctx, save, read) for save in saves):
            continue
        if all(best_only(ctx, save) for save in saves):
            continue  # the best weights so far, and nothing of where the run stood
        if trains_after(ctx, ctx.scope_of(load), load):
            return True
        function = ctx.function(load)
        sites = [c for c in call_sites(ctx, function) if _not_a_library(ctx, c)] if function is not None else []
        if any(trains_after(ctx, ctx.scope_of(site), site) or _method_trains_after(ctx, site) for site in sites):
            return True
    return False


def _method_trains_after(ctx: FileContext, site: ast.Call) -> bool:
    """A method of this file called by name on an object after ``site`` in its scope runs a
    backward or an optimizer step (DDPG's ``agent.update()`` after ``agent.load()``)."""
    later = [c for c in ctx.calls_in(ctx.scope_of(site)) if position(c) > position(site) and _not_a_library(ctx, c)]
    targets = [f for c in later if (name := method(c)) and (f := ctx.functions.get(name)) is not None]
    return any(ctx.is_backward(c) or ctx.is_optimizer_step(c) for f in targets for c in ctx.reached_calls(f, 1))


def _not_a_library(ctx: FileContext, call: ast.Call) -> bool:
    """``agent.load()``, not ``torch.load(...)`` or ``json.load(f)``: a call site by the function's
    name whose receiver is not an imported module."""
    return (dotted(call.func) or "").split(".")[0] not in ctx.imports


def torch_loads_feeding(ctx: FileContext, load: ast.Call) -> list[ast.Call]:
    """The ``torch.load(...)`` calls whose result ``load`` restores: written inside it, or given to
    a name it reads earlier in the same scope (``ckpt = torch.load(p)``; ``load_state_dict(ckpt['model'])``)."""
    found = [n for a in load.args for n in ast.walk(a) if _is_torch_load(ctx, n)]
    names = {dotted(n) for a in load.args for n in ast.walk(a) if isinstance(n, ast.Name)}
    for name in names - {None}:
        for value in ctx.assignments.get(name or "", []):
            if _is_torch_load(ctx, value) and ctx.scope_of(value) is ctx.scope_of(load):
                found.append(value)  # type: ignore[arg-type]
    return found


def _is_torch_load(ctx: FileContext, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ctx.qualname(node.func) == "torch.load"


def _same_format(ctx: FileContext, read: ast.Call) -> list[ast.Call]:
    """The saves of this file whose dict has every key (two or more) read out of ``read``'s result
    in its scope: the script reads back a checkpoint of its own, wherever the path comes from."""
    statement = ctx.statement(read)
    if not (isinstance(statement, ast.Assign) and statement.value is read and len(statement.targets) == 1):
        return []
    name = dotted(statement.targets[0])
    read_keys = {
        key
        for node in ctx.walk(ctx.scope_of(read))
        if isinstance(node, ast.Subscript) and dotted(node.value) == name and (key := _text(node.slice))
    }
    if len(read_keys) < 2:
        return []
    return [save for save, _ in saves_with_paths(ctx) if read_keys <= _saved_keys(ctx, save)]


def _saved_keys(ctx: FileContext, save: ast.Call) -> set[str]:
    """The string keys of the dict ``save`` writes, written in the call or given to the name it saves
    in the same scope (``state = {...}; torch.save(state, p)``)."""
    saved = save.args[0] if save.args else None
    values = [saved] if saved is not None else []
    if isinstance(saved, ast.Name):
        values += [v for v in ctx.assignments.get(saved.id, []) if ctx.scope_of(v) is ctx.scope_of(save)]
    return {key for v in values if isinstance(v, ast.Dict) for k in v.keys if k is not None and (key := _text(k))}


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
