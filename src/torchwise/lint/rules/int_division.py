"""TW145: ``/=`` on a NumPy array built with an integer dtype.

>>> from torchwise.lint.engine import lint_source
>>> src = "import numpy as np\\nhist = np.zeros((3, 3), dtype=int)\\nhist /= 2\\n"
>>> [(f.code, f.line) for f in lint_source(src)]
[('TW145', 3)]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from torchwise.lint.ast_names import dotted, keyword
from torchwise.lint.context import FileContext
from torchwise.lint.findings import Hit, Level
from torchwise.lint.registry import rule

_BUILDERS = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.array", "numpy.arange"})
_INT_TYPES = frozenset({"int", "numpy.int8", "numpy.int16", "numpy.int32", "numpy.int64", "numpy.uint8", "numpy.intc"})


@rule("TW145", Level.ERROR, hint="build the array with a float dtype, or divide into a new array (a = a / b)")
def in_place_true_division_of_ints(ctx: FileContext) -> Iterator[Hit]:
    """``a /= b`` (or ``a[i] /= b``) where ``a`` is a NumPy array built with an integer dtype.

    Why: ``/`` is true division and gives floats, which NumPy will not cast back into an
    integer array in place: ``UFuncTypeError: Cannot cast ufunc 'divide' output from float64
    to int64`` (pytorch-semantic-segmentation's ``gts_all[vi, :, :] /= count`` on
    ``np.zeros(..., dtype=int)``, at the first validation).
    Fix: ``np.zeros(..., dtype=np.float64)``, ``a //= b`` if integer division was meant, or
    ``a = a / b``.
    It follows the name to the one array it was built as (``np.zeros`` / ``ones`` / ``empty`` /
    ``full`` / ``array`` / ``arange`` with ``dtype=int`` or an integer NumPy type).
    Cannot see: an integer dtype that comes from elsewhere (``dtype=labels.dtype``), or a torch
    tensor (``/=`` on an int tensor raises too, but its dtype is rarely written where it is made).
    """
    for node in ctx.nodes:
        if not (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div)):
            continue
        target = node.target.value if isinstance(node.target, ast.Subscript) else node.target
        name = dotted(target)
        values = ctx.assignments.get(name or "", [])
        if len(values) == 1 and _int_array(ctx, values[0]):
            yield Hit(node, f"{name} is an integer array: /= cannot store the float result (UFuncTypeError)")


def _int_array(ctx: FileContext, value: ast.expr) -> bool:
    if not (isinstance(value, ast.Call) and (ctx.qualname(value.func) or "") in _BUILDERS):
        return False
    dtype = keyword(value, "dtype")
    if dtype is None:
        return False
    if isinstance(dtype, ast.Constant):
        return isinstance(dtype.value, str) and dtype.value.startswith(("int", "uint"))
    return (ctx.qualname(dtype) or "") in _INT_TYPES
