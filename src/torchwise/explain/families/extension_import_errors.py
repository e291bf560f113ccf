"""Known errors of importing a package's compiled part that was never built.

Packages with their own C++/CUDA ops (detectron2, maskrcnn_benchmark, mmcv, apex, pointnet2,
DCN, mamba) keep them in a binding module that a build step writes next to the Python files:
``_C``, ``_ext``, ``*_cuda``, ``amp_C``. A source checkout run without ``pip install -e .`` /
``python setup.py build develop``, a wheel without the ops, or a build that failed leaves it out,
and Python says so in two ways: ``cannot import name '_C'`` (from the package, often with no
location) and ``No module named 'fused_layer_norm_cuda'`` for an op module installed at top level.
The name's grammar (``COMPILED_PART``) says it is a compiled part; the frame or source line that
imports it names the package. (``No module named 'pkg._C'`` is read by ``installed-module``.)
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import frames
from torchwise.explain.version_lookup import COMPILED_PART

# Top-level op modules that packages build (apex's amp_C, fused_layer_norm_cuda, mamba's
# selective_scan_cuda): the name says compiled, the package is whoever imports it.
TOP_LEVEL_OP = re.compile(r"^(?:amp_C|\w+_(?:cuda|cuda_kernel|cpp|ext|C))$")


def _package_of(name: str, match: re.Match[str], text: str) -> str | None:
    """The package whose code imports the compiled part: ``from X import _C`` written in the
    paste, ``from 'X'`` in the message, or the installed package of the last frame above it."""
    said = re.search(r"from '([\w.]+)'", match.group(0))
    if said:
        return said.group(1).split(".")[0]
    written = list(
        re.finditer(
            rf"from\s+([\w.]+)\s+import\s+[^\n]*\b{re.escape(name)}\b|import\s+([\w.]+)\.{re.escape(name)}\b",
            text[: match.start()],
        )
    )
    if written:
        return (written[-1].group(1) or written[-1].group(2)).lstrip(".").split(".")[0] or None
    inside = [frame.package for _, frame in frames(text[: match.start()]) if frame.package]
    return inside[-1] if inside else None


def _not_built(match: re.Match[str], text: str) -> Explanation | None:
    name = match.group(1) or match.group(2)
    top_level = match.group(2) is not None
    if top_level and not TOP_LEVEL_OP.match(name):
        return None
    if not top_level and not COMPILED_PART.match(name):
        return None
    package = _package_of(name, match, text)
    if package in (None, "torch") or package == name:
        # torch's own core is read by the install entries; an unknown owner is not told here
        return None if not top_level or package == "torch" else _answer(name, None)
    return _answer(name, package)


def _answer(name: str, package: str | None) -> Explanation:
    owner = package or "the package that imports it"
    return answer(
        title=f"{owner}'s compiled ops ({name}) were never built"
        if package
        else f"The compiled op module {name} was never built",
        meaning=(
            f"{name} is the binary module of {owner}'s C++/CUDA ops, written by its build step next to"
            " the Python files; Python found the Python files but not it."
        ),
        cause=(
            f"{owner} is used from a source checkout that was not built (no pip install -e . /"
            " python setup.py build develop), was installed without its ops (a wheel or variant"
            " without the CUDA extension, apex without --cuda_ext), or its build failed; or Python"
            f" imports the unbuilt source folder in the working directory instead of the installed {owner}."
        ),
        fix=(
            f"Build/install {owner} with its ops as its install guide says, against the installed"
            " torch and CUDA (in its folder: pip install -e . --no-build-isolation, or the prebuilt"
            " wheel for this torch+CUDA), read the build log for the first error if it fails, and"
            " run from outside the source folder so the installed, built package is the one imported."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart(
        "extension-not-built",
        r"cannot import name '(\w+)'(?: from '[\w.]+')?(?! from partially)|No module named '(\w+)'",
        _not_built,
    ),
]
