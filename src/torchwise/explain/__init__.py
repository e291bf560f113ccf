"""Explain a pasted error: the text -> the error line -> its cause and the fix.

``lookup`` holds the table and ``explain()``; ``explanation`` the shape of an answer;
``families/`` what is known, one module per family of errors. Importing this package imports no
submodule and no torch.

``torchwise.explain`` names both this package and the function users call, so the package is
callable: ``torchwise.explain(text)`` is ``torchwise.explain.lookup.explain(text)`` whichever of
the two Python bound to the name first.

>>> import torchwise.explain
>>> torchwise.explain("RuntimeError: Torch not compiled with CUDA enabled").id
'torch-not-compiled-with-cuda'
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallablePackage(types.ModuleType):
    def __call__(self, error: Any) -> Any:
        from torchwise.explain.lookup import explain

        return explain(error)


sys.modules[__name__].__class__ = _CallablePackage
