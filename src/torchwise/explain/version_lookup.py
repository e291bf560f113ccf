"""Version mismatches read from the installed packages, for messages no family knows.

``module 'X' has no attribute 'Y'`` and ``No module named 'X.sub'`` name a package and a name.
The installed package (``installed``, read from its files, never imported) answers which of the
usual causes it is: Y is a submodule X does not import by itself (``import X.Y``); the installed
X defines Y, so the X that raised was another release or a file named like the package; the
installed X has no Y at all (removed or renamed: its closest names); or X is not installed and
its pip name is known (``cv2`` is ``opencv-python``). Where the files do not settle it (a module
that adds names by ``import *`` or a module ``__getattr__``), nothing is said. ``lookup`` tries
these only where no family knows the message.

Because the answer is read from the packages installed where explain runs, it names that
version ("installed here"): where that is the environment that raised, it is the user's own.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, answer, known
from torchwise.explain.installed import WELL_KNOWN, Package, has_submodule, look_up, package, pip_name
from torchwise.explain.paste import frames

ATTRIBUTE = r"AttributeError: module '([\w.]+)' has no attribute '(\w+)'"
NO_MODULE = r"No module named '?([A-Za-z_][\w.]*)'?"


def _here(found: Package) -> str:
    return f"{found.name}=={found.version}" if found.version else found.name


def _shadowing_file(text: str, name: str) -> str | None:
    """A file or folder of the user's named like the package (``numpy.py``), seen in the frames."""
    for _, frame in frames(text):
        if not frame.in_library and re.search(rf"(?:^|[\\/]){re.escape(name)}(?:\.py)?(?:[\\/]|$)", frame.file):
            return frame.file
    return None


def _attribute_reading(module: str, attribute: str, text: str) -> tuple[str, str] | None:
    found = package(module)
    if found is None:
        return None
    if has_submodule(found, f"{module}.{attribute}"):
        return (
            f"{module}.{attribute} is a submodule that {module} does not import by itself: it is an"
            f" attribute only after something imports it.",
            f"Import it explicitly before use: import {module}.{attribute} (or from {module} import {attribute}).",
        )
    lookup = look_up(module, attribute)
    if lookup is None:
        return None
    if lookup.defines:
        shadow = _shadowing_file(text, module.split(".")[0])
        if shadow:
            return (
                f"The file {shadow} has the package's name, so Python imported it instead of the"
                f" installed {module}, which defines {attribute}.",
                f"Rename {shadow} (and delete its __pycache__) so that import {module} finds the package.",
            )
        return (
            f"The {module} installed here ({_here(found)}) defines {attribute} (in {lookup.module}), so"
            f" the {module} that raised is another release that lacks it (an older one, from before"
            f" {attribute} was added) or a file named {module.split('.')[0]}.py in the working directory.",
            f"Upgrade {module.split('.')[0]} in the environment that runs the code (pip install -U"
            f" {pip_name(module) or module.split('.')[0]}; {_here(found)} has it), or rename a local"
            f" {module.split('.')[0]}.py that shadows the package.",
        )
    if not lookup.complete:
        return None
    closest = [name for name in lookup.closest if name != attribute]
    instead = f" Its closest names: {', '.join(closest)}." if closest else ""
    return (
        f"The {module} installed here ({_here(found)}) has no {attribute}: the code was written"
        f" for another {found.name} release, in which {attribute} existed (removed or renamed since)"
        f" or which added it later.{instead}",
        f"Install the {found.name} version the code was written for (its requirements), or change"
        f" the code to the installed release's name{' (' + closest[0] + '?)' if closest else ''}.",
    )


# A package's compiled part: the binding module of its C++/CUDA ops (mmcv._ext, detectron2._C)
COMPILED_PART = re.compile(r"^_(?:C|ext|ops|cuda|cpp|clib|native|backend|kernels?)$|^_?\w+_(?:cuda|ext|cpp|C)$")


def _module_reading(dotted: str, text: str) -> tuple[str, str] | None:
    top = dotted.split(".")[0]
    # Python names the first part of a dotted import it cannot find: "No module named 'a.b'"
    # says that a itself was imported, so "a is not installed" is never the reading for it.
    if "." in dotted and COMPILED_PART.match(dotted.rsplit(".", 1)[1]):
        return (
            f"{top} was imported, but its compiled part {dotted} was not there: {top} was installed"
            " without building its C++/CUDA ops (a variant or wheel without them, a source checkout"
            f" never built, or a build that failed), or Python imported an unbuilt {top} source"
            " folder in the working directory instead of the installed package.",
            f"Install {top} with its compiled ops, built for the installed torch and CUDA (the"
            f" package's full/prebuilt wheel for this torch and CUDA, or build it from source in its"
            f" folder: pip install -e . --no-build-isolation), and run from outside {top}'s source folder.",
        )
    inside = [frame for _, frame in frames(text) if frame.package]
    if "." in dotted and inside and inside[-1].package == top:
        # the installed package's own file imports its own submodule, and it is not there
        return (
            f"The installed {top} is incomplete: its own code ({inside[-1].place}) imports {dotted},"
            f" which is missing from the install (files of two {top} releases mixed by an upgrade"
            " over an older one, or an interrupted or partial install).",
            f"Reinstall it cleanly: pip uninstall {pip_name(top) or top} (until none is left), then"
            f" pip install {pip_name(top) or top} in the version the project needs, in the environment"
            " that runs the code.",
        )
    found = package(top)
    if found is not None:
        if "." not in dotted:
            distribution = pip_name(top) or top
            return (
                f"{top} is installed here ({_here(found)}) but not in the Python that ran the code:"
                " another environment (venv, conda env, kernel) than the one it was installed into, or"
                f" a folder named {top} in the working directory (its source tree) hides the installed one.",
                f"Install it with the interpreter that runs the code: python -m pip install {distribution}"
                " (check with python -c 'import sys; print(sys.executable)').",
            )
        if has_submodule(found, dotted):
            return None  # installed here: the environment that raised is another one, or a broken install
        return (
            f"The {top} installed here ({_here(found)}) has no module {dotted}: the code was written"
            f" for another {top} release, which had it (moved or removed since) or added it later.",
            f"Install the {top} version the code was written for (its requirements file), or import"
            f" from where the installed release keeps it.",
        )
    # a dotted name is read only where the table names its own distribution (a namespace
    # package such as google.protobuf, whose first part proves nothing)
    distribution = pip_name(dotted) if "." not in dotted or dotted in WELL_KNOWN else None
    if distribution:
        return (
            f"{top} is not installed in the Python that ran the code; its pip name is {distribution}.",
            f"Install it with that interpreter's pip: python -m pip install {distribution}"
            " (in the environment the script runs in: the same venv or conda env).",
        )
    own = _shadowing_file(text, top)
    if own:
        return (
            f"{top} is the project's own package ({own}), not an installed one, and Python looked"
            " for it from another working directory.",
            "Run from the project's root folder (python -m package.script), or add that folder to"
            " PYTHONPATH (or pip install -e . where the project has a setup file).",
        )
    return None


def _attribute_known(match: re.Match[str], text: str) -> bool:
    return _attribute_reading(match.group(1), match.group(2), text) is not None


def _module_known(match: re.Match[str], text: str) -> bool:
    return _module_reading(match.group(1), text) is not None


def _attribute(match: re.Match[str], text: str) -> Explanation:
    module, attribute = match.group(1), match.group(2)
    cause, fix = _attribute_reading(module, attribute, text) or ("", "")
    meaning = f"Python looked up {attribute} on the module {module} and found no such name."
    return answer(title=f"module {module} has no attribute {attribute}", meaning=meaning, cause=cause, fix=fix)


def _module(match: re.Match[str], text: str) -> Explanation:
    cause, fix = _module_reading(match.group(1), text) or ("", "")
    meaning = f"Python's import found no module {match.group(1)} on its path."
    return answer(title=f"No module named {match.group(1)}", meaning=meaning, cause=cause, fix=fix)


KNOWN = [
    known("installed-attribute", ATTRIBUTE, _attribute, generic=True, when=_attribute_known),
    known("installed-module", NO_MODULE, _module, generic=True, when=_module_known),
]
