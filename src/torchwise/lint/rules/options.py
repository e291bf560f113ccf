"""TW139: a command-line option that promises to load or resume, parsed and never read.

>>> from torchwise.lint.engine import lint_source
>>> src = "import argparse\\np = argparse.ArgumentParser()\\np.add_argument('--resume')\\nargs = p.parse_args()\\n"
>>> [(f.code, f.line) for f in lint_source(src)]
[('TW139', 3)]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, keyword, method
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule

# Options whose name or help says they bring weights or a training state back ("disc. weights"
# in a help about clipping does not).
_LOADING_NAME = re.compile(r"resume|restore|reload|pretrain|load|weights|snapshot|finetune|warm_?start", re.I)
_LOADING_HELP = re.compile(r"resum|restor|reload|pretrain|\bload(s|ed|ing)?\b", re.I)  # not "data loader"
# Calls that only show or store a value: the namespace printed, logged or saved is not read for
# an option (``wandb.config.update(args)``, ``torch.save(state, path)``).
_SHOWS = frozenset(
    "print str repr format info debug warning log write pprint dump dumps save update log_hyperparams "
    "add_hparams add_text".split()
)


@rule("TW139", Level.WARNING, hint="read the option where the script loads (or delete it): it does nothing now")
def loading_option_never_read(ctx: FileContext) -> Iterator[Hit]:
    """``--resume`` / ``--load`` / ``--pretrained`` declared, parsed and never read.

    Why: the user asks for a resume or for pretrained weights and gets a run from scratch, with
    no error: the option is accepted and nothing looks at it (RAdam's cifar.py keeps
    ``--resume`` and ``--evaluate`` while its resume block is commented out, so ``-e``
    evaluates an untrained model).
    Fix: restore the code that reads the option, or remove the option so the mistake shows.
    It reports an option whose name or help speaks of loading or resuming, in a file that
    parses its arguments, when no attribute of that name is read anywhere in the file and the
    parsed namespace never leaves it (handed to a function of another file, ``vars(args)`` or
    ``args.__dict__`` passed on, ``getattr`` with a computed name). A dict built from
    ``args._get_kwargs()`` that the file only indexes with constants is followed.
    Cannot see: an option read in another file that imports this parser (it is then reported
    wrongly, but a file that only builds the parser and never parses is left alone).
    """
    parsed = [c for c in ctx.calls if method(c) in {"parse_args", "parse_known_args"}]
    if not parsed or _namespace_escapes(ctx, parsed):
        return
    read = {n.attr for n in ctx.nodes if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)}
    read |= _constant_keys(ctx)
    for call in ctx.calls:
        if method(call) != "add_argument":
            continue
        dest = _dest(call)
        if dest is None or dest in read:
            continue
        help_text = keyword(call, "help")
        help_words = str(help_text.value) if isinstance(help_text, ast.Constant) else ""
        if _LOADING_NAME.search(dest) or _LOADING_HELP.search(help_words):
            flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            flag = next((f for f in flags if f.startswith("--")), flags[0] if flags else dest)
            yield Hit(call, f"{flag} is parsed but nothing reads args.{dest}: the run ignores it silently")


def _dest(call: ast.Call) -> str | None:
    given = keyword(call, "dest")
    if isinstance(given, ast.Constant) and isinstance(given.value, str):
        return given.value
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    long = next((f for f in flags if f.startswith("--")), None)
    if long is not None:
        return long[2:].replace("-", "_")
    return flags[0] if flags and not flags[0].startswith("-") else None


def _namespaces(ctx: FileContext, parsed: list[ast.Call]) -> set[str]:
    """Names bound to the parsed namespace (``args = parser.parse_args()``, ``args =
    get_args()`` for a local function that returns it), to a dict of all its entries
    (``state = {k: v for k, v in args._get_kwargs()}``, ``vars(args)``), and the parameters
    of local functions they are handed to."""
    names: set[str] = set()
    for _ in range(3):  # a few hops: args -> main(opt) -> train(opt)
        sources = set(map(id, parsed)) | {id(c) for c in ctx.calls if _returns_namespace(ctx, c, parsed, names)}
        for node in ctx.nodes:
            if isinstance(node, ast.Assign) and (_holds(node.value, sources, names) or _whole(node.value, names)):
                names |= {d for t in node.targets for n in ast.walk(t) if (d := dotted(n))}
            elif isinstance(node, ast.Call) and (target := ctx.callee(node)) is not None:
                params = [a.arg for a in target.args.args]
                for index, arg in enumerate(node.args):
                    if _holds(arg, sources, names) and index < len(params):
                        names.add(params[index])
    return names


def _holds(value: ast.expr, sources: set[int], names: set[str]) -> bool:
    """``parser.parse_args()``, ``parser.parse_known_args()[0]``, ``get_args()``, ``args``."""
    return dotted(value) in names or any(id(n) in sources for n in ast.walk(value))


def _returns_namespace(ctx: FileContext, call: ast.Call, parsed: list[ast.Call], names: set[str]) -> bool:
    target = ctx.callee(call)
    return target is not None and _returner(ctx, target, parsed, names)


def _returner(ctx: FileContext, function: ast.AST, parsed: list[ast.Call], names: set[str]) -> bool:
    """A local function that returns the parsed namespace (``return parser.parse_args()``)."""
    sources = set(map(id, parsed))
    return any(
        isinstance(n, ast.Return) and n.value is not None and _holds(n.value, sources, names)
        for n in ctx.walk(function)
    )


def _whole(value: ast.expr, names: set[str]) -> bool:
    """``vars(args)``, ``args.__dict__``, ``{k: v for k, v in args._get_kwargs()}``."""
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and dotted(node.func) == "vars" and node.args and dotted(node.args[0]) in names:
            return True
        if isinstance(node, ast.Attribute) and node.attr in {"__dict__", "_get_kwargs"} and dotted(node.value) in names:
            return True
    return False


def _namespace_escapes(ctx: FileContext, parsed: list[ast.Call]) -> bool:
    """The namespace (or a dict of all its entries) reaches code lint cannot read: a function
    of another file, ``getattr`` with a computed name, ``**vars(args)``."""
    names = _namespaces(ctx, parsed)
    functions = {id(f) for f in ctx.nodes if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
    called = {id(ctx.callee(c)) for c in ctx.calls if ctx.callee(c) is not None}
    for function in (f for f in ctx.nodes if id(f) in functions - called):
        if _returner(ctx, function, parsed, names):
            return True  # `def get_args(): return parser.parse_args()` for another file to call
    for node in ctx.nodes:
        if not isinstance(node, ast.Call) or node in parsed:
            continue
        if any(k.arg is None and (_whole(k.value, names) or dotted(k.value) in names) for k in node.keywords):
            return True  # run(**vars(args)): the options arrive as keyword parameters
        func = dotted(node.func) or ""
        given = [*node.args, *(k.value for k in node.keywords)]
        if func == "getattr" and node.args and dotted(node.args[0]) in names:
            if not (len(node.args) > 1 and isinstance(node.args[1], ast.Constant)):
                return True
            continue
        if ctx.callee(node) is not None or func.rsplit(".", 1)[-1] in _SHOWS or func in {"vars", "dict", "len"}:
            continue
        if (ctx.qualname(node.func) or "").startswith(("torch.", "json.", "yaml.", "pickle.")):
            continue
        if any(_holds(a, set(map(id, parsed)), names) or _whole(a, names) for a in given):
            return True
    return False


def _constant_keys(ctx: FileContext) -> set[str]:
    """Keys read as ``state['lr']`` from a dict built from the namespace
    (``state = {k: v for k, v in args._get_kwargs()}``, bearpaw's template)."""
    return {
        str(n.slice.value)
        for n in ctx.nodes
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)
    }
