"""Resolve ``"package.module:name"`` targets to Python objects, with errors a user can act on.

>>> resolve_target("math:sqrt")(9.0)
3.0
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from torchwise.errors import TargetError


def resolve_target(target: str, *, search_dir: Path | None = None) -> Any:
    """Import ``module:attr`` (``attr`` may be dotted). ``search_dir`` is tried first for the module.

    ``search_dir`` is the folder of the config file, so ``model.target: my_model:Net`` finds
    ``my_model.py`` beside the YAML, the way a user expects.
    """
    module_name, sep, attr_path = target.partition(":")
    if not sep or not module_name or not attr_path:
        raise TargetError(
            f"target {target!r} is not of the form 'package.module:name'",
            hint="write the module path, a colon, and the name, e.g. 'my_project.models:Net'",
        )
    added = False
    if search_dir is not None and str(search_dir) not in sys.path:
        sys.path.insert(0, str(search_dir))
        added = True
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name and module_name.startswith(err.name):
            raise TargetError(
                f"cannot import module {module_name!r} for target {target!r}",
                hint="check the spelling, or run from the folder that holds the module "
                "(the config file's folder is searched too)",
            ) from err
        raise
    finally:
        if added:
            sys.path.remove(str(search_dir))
    obj: Any = module
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(module) if not n.startswith("_")]
            raise TargetError(
                f"module {module_name!r} has no attribute {attr_path!r}",
                hint=f"names it defines: {', '.join(names[:12]) or '(none)'}",
            )
        obj = getattr(obj, part)
    return obj
