"""One parsed file and the small amount of flow knowledge the rules share.

The rules ask three kinds of question, all answered here once per file:

- *where is this node?* — its enclosing loops and function, whether it sits under
  ``torch.no_grad()`` or under an ``if step % k == 0`` condition;
- *what is this call?* — a backward, an optimizer step, a scheduler step, a zero_grad;
- *what was this name built from?* — ``opt = torch.optim.AdamW(...)`` makes ``opt`` an
  optimizer, ``train_loader = DataLoader(...)`` makes it a loader.

>>> ctx = FileContext.parse("import torch\\nopt = torch.optim.SGD(params)\\nopt.step()\\n")
>>> ctx.kind(ctx.calls[-1].func.value)
'optimizer'
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from functools import cached_property
from typing import TypeVar

from torchwise.lint.ast_names import dotted, has_modulo, is_constant, method, receiver
from torchwise.lint.kinds import classify

T = TypeVar("T")
Loop = ast.For | ast.While | ast.AsyncFor
Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef

NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "no_grad", "inference_mode"})


# Objects whose .backward(loss) takes the loss as an argument (Accelerate, Fabric, DeepSpeed).
_WRAPPERS = re.compile(r"(accelerator|fabric|engine|trainer)$")


def backward_loss(call: ast.Call) -> ast.expr | None:
    """The loss a backward call differentiates: ``loss`` in ``loss.backward()``,
    ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``.

    >>> ast.unparse(backward_loss(ast.parse("accelerator.backward(loss / 4)").body[0].value))
    'loss / 4'
    """
    target = receiver(call)
    if call.args and (method(call) != "backward" or _WRAPPERS.search(dotted(target) or "")):
        return call.args[0]  # accelerator.backward(loss), torch.autograd.backward(loss)
    if isinstance(target, ast.Call) and method(target) == "scale" and target.args:
        return target.args[0]
    return target


def is_main_guard(node: ast.AST) -> bool:
    """``if __name__ == "__main__":``"""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    sides = [node.test.left, *node.test.comparators]
    return any(dotted(s) == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def position(node: ast.AST) -> tuple[int, int]:
    """Where a node starts; (0, 0) for nodes without a place (contexts, operators)."""
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _annotations(tree: ast.AST) -> Iterator[ast.expr]:
    """The type annotations in a tree: parameters', return types and ``x: T = ...``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            yield node.annotation
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            yield node.returns


class FileContext:
    """A parsed file with parent links, import aliases, assignments and call classifiers."""

    def __init__(self, tree: ast.Module, source: str, path: str = "<string>") -> None:
        self.tree = tree
        self.source = source
        self.path = path
        self.parents: dict[ast.AST, ast.AST] = {}
        self.calls: list[ast.Call] = []
        self.imports: dict[str, str] = {}
        self.assignments: dict[str, list[ast.expr]] = {}
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        # Every node once, so rules need not re-walk the tree; type annotations are left out:
        # `scaler: torch.cuda.amp.GradScaler` names a type, it runs nothing.
        self.nodes: list[ast.AST] = []
        self._memo: dict[object, object] = {}
        # Where ``async=`` keywords were renamed so that Python 3.7+ could parse the file.
        self.renamed_async: tuple[tuple[int, int], ...] = ()
        # Where Python 2 ``print x`` statements were read as ``print(x)`` (TW144 reports them).
        self.print_statements: tuple[tuple[int, int], ...] = ()
        annotations = {id(n) for a in _annotations(tree) for n in ast.walk(a)}
        for parent in ast.walk(tree):
            if id(parent) not in annotations:
                self.nodes.append(parent)
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
            self._index(parent)
        self.calls.sort(key=position)

    def memo(self, key: object, compute: Callable[[], T]) -> T:
        """``compute()`` once per file: for results several rules share."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[return-value]

    @classmethod
    def parse(cls, source: str, path: str = "<string>") -> FileContext:
        return cls(ast.parse(source, filename=path), source, path)

    def _index(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            self.calls.append(node)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                self.imports[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                self.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                key = dotted(target)
                if key:
                    self.assignments.setdefault(key, []).append(node.value)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.functions.setdefault(node.name, node)

    # --- names -------------------------------------------------------------------------

    def qualname(self, node: ast.AST) -> str | None:
        """The dotted name with its import alias resolved: ``optim.SGD`` -> ``torch.optim.SGD``."""
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        full = self.imports.get(head, head)
        return f"{full}.{rest}" if rest else full

    def constructor(self, node: ast.AST) -> str | None:
        """The qualname of the call a name was last assigned from (through ``.to(...)`` chains)."""
        key = dotted(node)
        values = self.assignments.get(key, []) if key else []
        for value in reversed(values):
            while isinstance(value, ast.Call) and method(value) in {"to", "cuda", "cpu", "eval"}:
                value = receiver(value)  # type: ignore[assignment]
            if isinstance(value, ast.Call):
                return self.qualname(value.func)
        return None

    @cached_property
    def mentions_accelerator(self) -> bool:
        """Whether the file mentions a GPU or other accelerator at all; without one, tensors
        stay on the CPU (no host syncs to fear, nothing saved on a GPU)."""
        return bool(_ACCELERATOR_WORDS.search(self.source))

    @cached_property
    def module_classes(self) -> frozenset[str]:
        """Classes defined here that subclass something called ``Module`` (nn.Module and kin)."""
        return frozenset(
            node.name
            for node in self.nodes
            if isinstance(node, ast.ClassDef)
            and any((dotted(base) or "").endswith("Module") for base in node.bases)
        )

    def kind(self, node: ast.AST | None) -> str | None:
        """What an object is: optimizer, scheduler, scaler, loader or model (or None). A name
        whose parameters an optimizer built here updates is a model, whatever it is called
        (DGI's ``log = LogReg(...)``)."""
        if node is None:
            return None
        name = dotted(node)
        found = classify(
            built_from=self.constructor(node),
            name=name.rsplit(".", 1)[-1] if name else "",
            module_classes=self.module_classes,
        )
        if found is None and name in self.trained:
            return "model"
        return found

    @cached_property
    def trained(self) -> frozenset[str]:
        """Names whose ``.parameters()`` go into an optimizer built here."""
        from torchwise.lint.trained import trained_names

        return trained_names(calls=self.calls, qualname=self.qualname, assignments=self.assignments)

    # --- call classifiers ---------------------------------------------------------------

    def is_backward(self, call: ast.Call) -> bool:
        """``x.backward()``, ``accelerator.backward(loss)``, ``torch.autograd.backward(...)``."""
        if method(call) == "backward":
            return True
        return (self.qualname(call.func) or "") == "torch.autograd.backward"

    def is_zero_grad(self, node: ast.AST) -> bool:
        """``zero_grad()`` in any form, or ``p.grad = None``."""
        if isinstance(node, ast.Call):
            return method(node) == "zero_grad" or (
                method(node) == "zero_" and "grad" in (dotted(receiver(node)) or "")
            )
        if isinstance(node, ast.Assign) and is_constant(node.value, None):
            return any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in node.targets)
        return False

    def is_optimizer_step(self, call: ast.Call) -> bool:
        """``optimizer.step()`` or ``scaler.step(optimizer)``."""
        return method(call) == "step" and self.kind(receiver(call)) in {"optimizer", "scaler"}

    def is_scheduler_step(self, call: ast.Call) -> bool:
        """``scheduler.step()`` on anything built as (or named like) an LR scheduler."""
        return method(call) == "step" and self.kind(receiver(call)) == "scheduler"

    def is_model_mode(self, call: ast.Call, mode: str) -> bool:
        """``x.eval()`` / ``x.train(False)`` for mode 'eval'; ``x.train()`` for mode 'train'."""
        name, args = method(call), call.args
        if name == "eval" and not args:
            return mode == "eval"
        if name == "train" and len(args) <= 1 and not call.keywords:
            off = bool(args) and is_constant(args[0], False)
            return mode == ("eval" if off else "train")
        return False

    # --- where is it --------------------------------------------------------------------

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        """Parents up to (and including) the enclosing function, innermost first."""
        current = self.parents.get(node)
        while current is not None:
            yield current
            if isinstance(current, Scope):
                return
            current = self.parents.get(current)

    def statement(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement that holds ``node`` (the node itself if it is one)."""
        current: ast.AST | None = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.parents.get(current)
        return current

    def loops(self, node: ast.AST) -> list[Loop]:
        """Enclosing loops inside the same function, innermost first."""
        return [a for a in self.ancestors(node) if isinstance(a, Loop)]

    def function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ast.FunctionDef | ast.AsyncFunctionDef):
                return ancestor
        return None

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The function the node is in, or the module."""
        return self.function(node) or self.tree

    def is_no_grad(self, node: ast.AST) -> bool:
        """A ``with`` item or decorator that switches autograd off."""
        if isinstance(node, ast.Call):
            name = self.qualname(node.func) or ""
            if name in NO_GRAD_CONTEXTS:
                return True
            return (
                name.endswith("set_grad_enabled")
                and bool(node.args)
                and is_constant(node.args[0], False)
            )
        return (self.qualname(node) or "") in NO_GRAD_CONTEXTS

    def under_no_grad(self, node: ast.AST) -> bool:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ast.With) and any(
                self.is_no_grad(item.context_expr) for item in ancestor.items
            ):
                return True
            if isinstance(ancestor, ast.FunctionDef | ast.AsyncFunctionDef):
                return any(self.is_no_grad(d) for d in ancestor.decorator_list)
        return False

    def modulo_guard(self, node: ast.AST, stop: ast.AST) -> ast.If | None:
        """The innermost ``if ... % k ...`` between ``node`` and ``stop``, else None."""
        for ancestor in self.ancestors(node):
            if ancestor is stop:
                return None
            if isinstance(ancestor, ast.If) and has_modulo(ancestor.test):
                return ancestor
        return None

    def enclosing_if(self, node: ast.AST, stop: ast.AST) -> ast.If | None:
        """The innermost ``if`` between ``node`` and ``stop`` (what ran on one branch only), else None."""
        for ancestor in self.ancestors(node):
            if ancestor is stop:
                return None
            if isinstance(ancestor, ast.If):
                return ancestor
        return None

    def under_modulo(self, node: ast.AST, stop: ast.AST) -> bool:
        """Whether an ``if ... % k ...`` sits between ``node`` and ``stop``."""
        return self.modulo_guard(node, stop) is not None

    # --- what is inside -----------------------------------------------------------------

    def callee(self, call: ast.Call) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function defined in this file that ``f(...)`` or ``self.f(...)`` runs."""
        name = dotted(call.func) or ""
        if name.startswith(("self.", "cls.")) and name.count(".") == 1:
            name = name.partition(".")[2]
        return self.functions.get(name)

    def walk(self, root: ast.AST) -> Iterator[ast.AST]:
        """All nodes under ``root`` without entering nested functions, lambdas or classes."""
        stack = list(ast.iter_child_nodes(root))
        while stack:
            node = stack.pop()
            yield node
            if not isinstance(node, Scope):
                stack.extend(ast.iter_child_nodes(node))

    def calls_in(self, root: ast.AST) -> list[ast.Call]:
        """Calls under ``root`` (same function), in source order."""

        def collect() -> list[ast.Call]:
            return sorted((n for n in self.walk(root) if isinstance(n, ast.Call)), key=position)

        return self.memo(("calls_in", root), collect)

    def reached_calls(self, root: ast.AST, depth: int = 2) -> list[ast.Call]:
        """Calls under ``root`` plus those in the bodies of local functions it calls."""

        def collect() -> list[ast.Call]:
            found = list(self.calls_in(root))
            for call in self.calls_in(root) if depth > 0 else ():
                target = self.callee(call)
                if target is not None and target is not root:
                    found.extend(self.reached_calls(target, depth - 1))
            return found

        return self.memo(("reached", root, depth), collect)

    def import_time_calls(self) -> list[tuple[ast.Call, ast.Call]]:
        """(call, module-level call that reaches it) for what runs on import: module-level
        statements outside ``if __name__ == "__main__":``, and the local functions they call."""

        def collect() -> list[tuple[ast.Call, ast.Call]]:
            reached: list[tuple[ast.Call, ast.Call]] = []
            seen: set[ast.AST] = set()
            for statement in self.tree.body:
                if is_main_guard(statement) or isinstance(statement, Scope):
                    continue
                for node in self.walk(statement):
                    if isinstance(node, ast.Call):
                        reached.append((node, node))
                        reached.extend((c, node) for c in self._through(node, seen))
            return reached

        return self.memo("import_time_calls", collect)

    def _through(self, call: ast.Call, seen: set[ast.AST]) -> Iterator[ast.Call]:
        target = self.callee(call)
        if target is None or target in seen:
            return
        seen.add(target)
        for inner in self.calls_in(target):
            yield inner
            yield from self._through(inner, seen)

    def has_backward(self, root: ast.AST) -> bool:
        return any(self.is_backward(c) for c in self.calls_in(root))

    def data_names(self, expr: ast.AST) -> list[str]:
        """Names in a ``for`` iterable that look like a data loader or split."""
        names = []
        for node in ast.walk(expr):
            name = dotted(node) if isinstance(node, ast.Name | ast.Attribute) else None
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                name = str(node.slice.value)
            if name and (self.kind(node) == "loader" or _DATA_WORDS.search(name)):
                names.append(name)
        return names


_ACCELERATOR_WORDS = re.compile(r"cuda|\bgpu|accelerat|\bmps\b|\bxla\b|\.to\(\s*device", re.I)
_DATA_WORDS = re.compile(r"loader|^dl$|_dl$|batches|^(train|val|valid|test|eval)$", re.I)
