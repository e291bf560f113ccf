"""Where a ``package.module:name`` target's code would come from, found WITHOUT importing it.

`targets.resolve_target` imports; this module only looks. The trust gate uses it to show a user
which files a foreign run folder would run before anything runs, and resume uses it to
fingerprint the user's code. ``importlib.util.find_spec("a.b")`` is not safe for that: it
imports ``a`` to read its ``__path__``. So only top-level names are asked of the import system
(finders do not execute code for them) and sub-modules are looked up in the parent's folders
by the path finder directly, as the import would, without running the parent's ``__init__``.

>>> origin = locate_module("json.decoder")
>>> [path.name for path in origin.files]
['__init__.py', 'decoder.py']
>>> locate_module("no_such_module_xyz").found
False
"""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ModuleOrigin:
    """A module, the files importing it would execute (parent ``__init__`` first), and how it is found."""

    module: str
    files: tuple[Path, ...]
    kind: str  # "file", "built-in" (compiled into Python), "not found", or "unknown" (a custom finder)

    @property
    def found(self) -> bool:
        return self.kind != "not found"

    def describe(self) -> str:
        """For error messages: ``from <file>``, or why there is no file."""
        if self.files and self.kind == "file":
            parents = len(self.files) - 1
            above = f" (after {parents} package __init__ file{'s' if parents > 1 else ''} above it)" if parents else ""
            return f"from {self.files[-1]}{above}"
        return {"built-in": "(compiled into Python)", "not found": "(not found on this machine)"}.get(
            self.kind, "(found by a custom import hook, file unknown)")


def locate_module(module: str, *, search_dir: Path | None = None) -> ModuleOrigin:
    """Find the files ``import module`` would run, searching ``search_dir`` first (as
    `resolve_target` does) and then ``sys.path``. Nothing is imported or executed."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return ModuleOrigin(module, (), "not found")
    top = parts[0]
    files: list[Path] = []
    locations: Sequence[str] | None
    loaded = sys.modules.get(top)
    if loaded is not None:  # already imported: that module is what an import returns
        top_file = getattr(loaded, "__file__", None)
        locations = list(getattr(loaded, "__path__", None) or []) or None
        kind = "file" if top_file or locations else "built-in"
    else:
        spec = _find_top_level(top, search_dir)
        if spec is None:
            return ModuleOrigin(module, (), "not found")
        top_file = spec.origin if spec.has_location else None
        locations = spec.submodule_search_locations
        kind = "file" if top_file or locations else (
            "built-in" if spec.origin in ("built-in", "frozen") else "unknown")
    if top_file:
        files.append(Path(top_file))
    for depth in range(1, len(parts)):
        name = ".".join(parts[: depth + 1])
        loaded = sys.modules.get(name)
        if loaded is not None:
            sub_file = getattr(loaded, "__file__", None)
            locations = list(getattr(loaded, "__path__", None) or []) or None
        else:
            if not locations:  # the parent is not a package (or hides how it finds sub-modules)
                return ModuleOrigin(module, tuple(files), "not found" if kind == "file" else kind)
            spec = importlib.machinery.PathFinder.find_spec(name, list(locations))
            if spec is None:
                return ModuleOrigin(module, tuple(files), "not found")
            sub_file = spec.origin if spec.has_location else None
            locations = spec.submodule_search_locations
        if sub_file:
            files.append(Path(sub_file))
    return ModuleOrigin(module, tuple(files), kind)


def _find_top_level(name: str, search_dir: Path | None) -> importlib.machinery.ModuleSpec | None:
    # The import system's order: each meta-path finder in turn; the path finder sees search_dir
    # first because resolve_target puts it at the front of sys.path. A finder only looks for a
    # top-level name; none of them runs the module.
    path = [str(search_dir), *sys.path] if search_dir is not None else list(sys.path)
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        if finder is importlib.machinery.PathFinder:
            spec = importlib.machinery.PathFinder.find_spec(name, path)
        else:
            try:
                spec = find_spec(name, None)
            except (ImportError, ValueError):
                spec = None
        if spec is not None:
            return spec
    return None
