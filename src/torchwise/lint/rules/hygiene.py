"""Rules about the rest of a script: hard-coded shapes, seeds, attribute typos."""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, is_constant, keyword, method
from torchwise.lint.context import FileContext, is_main_guard
from torchwise.lint.context import receiver as receiver_of
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule

_UNSEEDING = frozenset({"random.seed", "numpy.random.seed", "np.random.seed"})


def _leading_literal(call: ast.Call) -> ast.Constant | None:
    dims = (
        call.args[0].elts
        if len(call.args) == 1 and isinstance(call.args[0], ast.Tuple)
        else call.args
    )
    if len(dims) < 2 or not isinstance(dims[0], ast.Constant):
        return None
    value = dims[0].value
    return dims[0] if isinstance(value, int) and not isinstance(value, bool) and value > 1 else None


@rule("TW114", Level.WARNING, hint="use x.view(x.size(0), -1) or x.flatten(1)")
def hard_coded_batch_size(ctx: FileContext) -> Iterator[Hit]:
    """``.view(32, ...)`` / ``.reshape(32, ...)`` with a literal batch size in ``forward``.

    Why: the model works for exactly one batch size; the last, smaller batch of an epoch
    (or any evaluation with another batch size) fails with a shape error or, worse, mixes
    samples together.
    Fix: take the batch size from the input: ``x.view(x.size(0), -1)`` or ``x.flatten(1)``.
    It warns where the literal is a batch size the file states (``batch_size=64``, ``BATCH_SIZE
    = 64``, a ``--batch-size`` default); another literal (``h.view(2, ...)``, an LSTM's two
    directions) is info.
    Cannot see: a literal that really is a fixed dimension of a model that only ever sees
    one batch size; a batch size set in another file (info); it looks only at ``forward``.
    """
    forwards = (n for n in ctx.nodes if isinstance(n, ast.FunctionDef) and n.name == "forward")
    for function in forwards:
        for call in ctx.calls_in(function):
            if method(call) not in {"view", "reshape"}:
                continue
            if (dotted(receiver_of(call)) or "").startswith("self."):
                continue  # reshaping a parameter or buffer, not the batch
            literal = _leading_literal(call)
            if literal is None:
                continue
            message = f".{method(call)}({literal.value}, ...) hard-codes the batch size"
            if literal.value in _batch_sizes(ctx):
                yield Hit(call, message)
            else:  # `h.view(2, ...)`: two directions of an LSTM, or a batch size set elsewhere
                yield Hit(call, f"{message}, if {literal.value} is the batch size", level=Level.INFO)


_BATCH_NAMES = re.compile(r"batch_?size|^bs$", re.I)


def _batch_sizes(ctx: FileContext) -> set[object]:
    """The batch sizes this file states: ``batch_size=64`` given to a call, ``BATCH_SIZE = 64``,
    or ``add_argument("--batch-size", default=64)``."""
    sizes: set[object] = set()
    for node in ctx.nodes:
        if isinstance(node, ast.keyword) and node.arg and _BATCH_NAMES.search(node.arg):
            value = node.value
        elif isinstance(node, ast.Assign) and any(_BATCH_NAMES.search(dotted(t) or "") for t in node.targets):
            value = node.value
        elif isinstance(node, ast.Call) and method(node) == "add_argument" and any(
            isinstance(a, ast.Constant) and _BATCH_NAMES.search(str(a.value).lstrip("-").replace("-", "_"))
            for a in node.args
        ):
            value = keyword(node, "default")
        else:
            continue
        if isinstance(value, ast.Constant):
            sizes.add(value.value)
    return sizes


@rule("TW115", Level.INFO, hint="call torch.manual_seed(seed) (or your seeding helper) at start-up")
def training_without_seed(ctx: FileContext) -> Iterator[Hit]:
    """A training script that never sets a seed.

    Why: weights, dropout masks and data order differ on every run, so a change cannot be
    told apart from noise and a bad run cannot be reproduced.
    Fix: ``torch.manual_seed(seed)`` (plus ``random``/``numpy`` seeds) before building the
    model, or a helper such as ``seed_everything(seed)``.
    Cannot see: seeding done in another module under a name without "seed" in it (known
    library set-ups that seed, such as detectron2's ``default_setup``, count). It stays
    quiet when nothing here draws random numbers (a pretrained model optimised from a fixed
    start, as in style transfer); a model class imported from another file counts as random.
    """
    backwards = [c for c in ctx.calls if ctx.is_backward(c)]
    if not backwards or not any(ctx.is_optimizer_step(c) for c in ctx.calls):
        return
    # A script runs something: a main guard, or training at module level. A library module
    # with a train_one_epoch() leaves seeding to the script that imports it.
    runs = any(is_main_guard(s) for s in ctx.tree.body) or any(
        ctx.is_backward(call) for call, _ in ctx.import_time_calls()
    )
    if not runs or not _draws_random_numbers(ctx):
        return
    for call in ctx.calls:
        name = ctx.qualname(call.func) or ""
        if "seed" in name.rsplit(".", 1)[-1].lower() and name not in _UNSEEDING or name in _SEEDING_SETUPS:
            return
    yield Hit(ast.Pass(lineno=1, col_offset=0), "training script never seeds torch's RNG")


# Library set-up calls that seed every RNG without "seed" in their name: detectron2's
# default_setup seeds from cfg.SEED (a logged random seed when it is -1).
_SEEDING_SETUPS = frozenset({"detectron2.engine.default_setup", "detectron2.engine.defaults.default_setup"})

_RANDOM_FUNCTIONS = frozenset(
    "rand randn randint randperm rand_like randn_like randint_like bernoulli multinomial "
    "normal dropout random_split shuffle".split()
)
_RANDOM_METHODS = frozenset({"normal_", "uniform_", "random_", "bernoulli_", "exponential_"})
# Layers whose weights start random (activations, pooling and losses do not).
_RANDOM_LAYERS = re.compile(
    r"^(Lazy)?(Linear|Bilinear|Conv|ConvTranspose|Embedding|LSTM|GRU|RNN|Transformer|"
    r"MultiheadAttention|Dropout|AlphaDropout)"
)


def _draws_random_numbers(ctx: FileContext) -> bool:
    """Whether anything here is random: a fresh layer, a random draw, a shuffle, dropout."""
    return ctx.memo("random", lambda: any(_random_call(ctx, c, set()) for c in ctx.calls))


def _random_call(ctx: FileContext, call: ast.Call, seen: set[str]) -> bool:
    name = ctx.qualname(call.func) or ""
    last = name.rsplit(".", 1)[-1]
    if name.startswith(("random.", "numpy.random.", "np.random.", "torch.nn.init.")):
        return True
    if last in _RANDOM_FUNCTIONS or last.startswith("Random") or method(call) in _RANDOM_METHODS:
        return True
    if is_constant(keyword(call, "shuffle"), True):
        return True
    if name.startswith("torch.nn.") and _RANDOM_LAYERS.match(last):
        return True
    if name.startswith("torchvision.models."):
        return keyword(call, "weights") is None and keyword(call, "pretrained") is None
    local = {n.name: n for n in ctx.nodes if isinstance(n, ast.ClassDef)}
    if last in local and last not in seen:
        seen.add(last)
        return any(_random_call(ctx, c, seen) for c in ctx.calls_in(local[last]))
    # A model class from another file: its layers are out of sight, so assume fresh weights.
    statement = ctx.statement(call)
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    return last[:1].isupper() and last not in local and any(ctx.kind(t) == "model" for t in targets)


_MODULE_NAMES = frozenset({"model", "net", "network", "module", "encoder", "decoder", "backbone"})


def _is_module(ctx: FileContext, node: ast.expr) -> bool:
    """Built as a module here, or named exactly like one (not ``model_param``)."""
    if ctx.kind(node) != "model":
        return False
    last = (dotted(node) or "").rsplit(".", 1)[-1]
    return ctx.constructor(node) is not None or last in _MODULE_NAMES


def _is_typo(attr: str) -> bool:
    """Near-misses of ``requires_grad`` (one or two letters off), not longer names built on it."""
    if attr in {"requires_grad", "requires_grad_"} or attr.startswith("_"):
        return False
    if abs(len(attr) - len("requires_grad")) > 2 or not ("gr" in attr or "req" in attr):
        return False  # cheap filter before the edit-distance ratio
    return difflib.SequenceMatcher(None, attr, "requires_grad").ratio() >= 0.9


@rule(
    "TW118", Level.ERROR, hint="spell it requires_grad (and use module.requires_grad_() on modules)"
)
def misspelled_tensor_attribute(ctx: FileContext) -> Iterator[Hit]:
    """``require_grad`` / ``requires_grads`` typos and assignments that freeze nothing.

    Why: Python lets you set any attribute, so ``p.require_grad = False`` silently creates
    a new attribute and the parameter keeps training; ``model.requires_grad = False`` on a
    module does the same; assigning ``requires_grad_`` replaces the method.
    Fix: ``p.requires_grad = False`` on tensors, ``module.requires_grad_(False)`` on modules.
    Cannot see: modules held under names that do not look like modules.
    """
    for node in ctx.nodes:
        if not isinstance(node, ast.Attribute):
            continue
        stored = isinstance(node.ctx, ast.Store)
        parent = ctx.parents.get(node)
        called = isinstance(parent, ast.Call) and parent.func is node
        if _is_typo(node.attr) and not called:
            yield Hit(
                node, f"'{node.attr}' is not a tensor attribute; did you mean 'requires_grad'?"
            )
        elif stored and node.attr == "requires_grad_":
            yield Hit(node, "assigning to requires_grad_ replaces the method; call it instead")
        elif stored and node.attr == "requires_grad" and _is_module(ctx, node.value):
            yield Hit(
                node,
                f"{ast.unparse(node.value)} is a module: setting requires_grad on it "
                "freezes nothing",
                hint="call module.requires_grad_(False)",
            )
