"""Python's "partially initialized module" (most likely due to a circular import), told apart by paths.

``cannot import name 'stack' from partially initialized module 'torch' (most likely due to a
circular import) (/path/to/torch.py)`` and ``partially initialized module 'X' has no attribute
'Y'`` say that a module was used while its own import was still running. Two causes show in the
paste's paths, whichever package is named:

* a file of the user's named like the package (``torch.py`` beside the script, shown in a frame or
  in the path Python prints): Python imports that file instead of the installed package, and the
  file's own ``import torch`` finds itself half-built;
* a cycle in the project's own modules: the module's file (the printed path, outside site-packages)
  appears earlier in the traceback, and the frames from there to the failing import are the cycle.

A cycle inside an installed package (a frozen app, a development build) is neither, and is left alone.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import LIBRARY, Frame, frames

PARTIAL = (
    r"(?:cannot import name '(\w+)' from|has no attribute '(\w+)'[^\n]*?|\bmodule) partially initialized module"
    r" '([\w.]+)'(?: has no attribute '(\w+)')? \(most likely due to a circular import\)(?: \(([^)\n]+)\))?"
)


def _file_name(path: str) -> str:
    return re.split(r"[\\/]", path)[-1]


def _short(path: str) -> str:
    """The file with its folder: models/__init__.py, which a bare __init__.py would not tell apart."""
    return "/".join(re.split(r"[\\/]", path)[-2:])


def _shadowing(module: str, path: str | None, text: str) -> str | None:
    """A user's file named like the module's top-level package: the printed path, or a frame's file."""
    top = module.split(".")[0]
    named = f"{top}.py"
    if path and _file_name(path) == named and not LIBRARY.search(path):
        return path
    return next((frame.file for _, frame in frames(text) if _file_name(frame.file) == named and not frame.in_library),
                None)


def _cycle(path: str | None, text: str, before: int) -> list[Frame] | None:
    """The frames from the first one in the module's own file to the failing import: the project's cycle."""
    if not path or LIBRARY.search(path):
        return None
    found = [frame for _, frame in frames(text[:before])]
    first = next((number for number, frame in enumerate(found) if frame.file == path), None)
    if first is None or len(found) - first < 2 or any(frame.in_library for frame in found[first:]):
        return None
    return found[first:]


def _read(match: re.Match[str], text: str) -> Explanation | None:
    name = match.group(1) or match.group(2) or match.group(4) or "a name"
    module, path = match.group(3), match.group(5)
    meaning = (
        f"Python was asked for {name} from {module} while {module}'s own import had not finished (a module"
        " is registered before its code runs, so a second import of it gets the half-built module)."
    )
    shadow = _shadowing(module, path, text)
    if shadow:
        top = module.split(".")[0]
        return answer(
            title=f"{shadow} is named like the package {top}, so it imports itself",
            meaning=meaning,
            cause=(
                f"Python found the file {shadow} before the installed {top} (the script's folder comes first on"
                f" the path), so `import {top}` inside it imports that same file again, half-built."
            ),
            fix=f"Rename {shadow} (e.g. {top}_utils.py), delete the __pycache__ beside it, and run again.",
        )
    cycle = _cycle(path, text, match.start())
    if cycle is None:
        return None
    chain = " -> ".join(f"{_short(frame.file)}:{frame.line}" for frame in cycle)
    return answer(
        title=f"A circular import in the project: {module} is imported again before it finished",
        meaning=meaning,
        cause=(
            f"The project's modules import each other in a cycle: {chain} imports {module} while {module}"
            f" ({_short(path or '')}) is still running its own imports, so {name} is not defined yet."
        ),
        fix=(
            f"Break the cycle: in the last file of the chain import {name} inside the function that uses it"
            f" (or import the module, `import {module}`, and write {module}.{name} where it is used), or move"
            " what both sides need into a third module that imports neither."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart("partially-initialized-module", PARTIAL, _read, generic=True),
]
