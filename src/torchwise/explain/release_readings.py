"""Import grammar read for a release mismatch where the installed packages cannot say more.

``version_lookup`` answers ``No module named 'a.b'`` and ``module 'a.b' has no attribute 'Y'`` from
the packages installed where explain runs. Where that package is not installed here, or its files
cannot show the name (a compiled module such as ``pyarrow.lib``), Python's own grammar still says
what happened:

* ``No module named 'torchvision.transforms.v2'``: Python names the first part of a dotted import
  it cannot find, so ``torchvision.transforms`` was imported and has no ``v2``: the torchvision
  that ran is a release without that module (added later, or moved since);
* ``module 'pyarrow.lib' has no attribute 'IpcReadOptions'`` raised in an installed package's line,
  or pasted alone: the module that was imported is another release than the code reading it was
  written for (or a second, older install found first).

Only a package the table of well-known distributions names is read (one installed here whose
files have the name is ``version_lookup``'s to answer or to leave); a project's own package (a
frame in its folder) and a name looked up on the user's own line (where a typo is as likely) are
left alone. ``lookup`` tries these after ``version_lookup``.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, answer, known
from torchwise.explain.installed import WELL_KNOWN, has_submodule, package, pip_name
from torchwise.explain.paste import frames, last_frame
from torchwise.explain.version_lookup import ATTRIBUTE, COMPILED_PART, NO_MODULE


def _third_party(top: str, text: str) -> bool:
    """A package the table of well-known distributions names, and not a folder of the user's project."""
    if top not in WELL_KNOWN:
        return False
    return not any(not frame.in_library and re.search(rf"(?:^|[\\/]){re.escape(top)}[\\/]", frame.file)
                   for _, frame in frames(text))


def _submodule_missing(match: re.Match[str], text: str) -> bool:
    dotted = match.group(1)
    if "." not in dotted or COMPILED_PART.match(dotted.rsplit(".", 1)[1]):
        return False
    top = dotted.split(".")[0]
    inside = [frame for _, frame in frames(text[: match.start()]) if frame.package]
    own_import = bool(inside) and inside[-1].package == top  # an incomplete install: version_lookup's
    found = package(top)  # installed here with that module: version_lookup's silence stands
    return not own_import and _third_party(top, text) and (found is None or not has_submodule(found, dotted))


def _submodule(match: re.Match[str], text: str) -> Explanation:
    dotted = match.group(1)
    parent, top = dotted.rsplit(".", 1)[0], dotted.split(".")[0]
    distribution = (pip_name(top) or top).split(" ")[0]
    return answer(
        title=f"The installed {top} has no {dotted}",
        meaning=(
            f"Python imported {parent} and found no {dotted} in it (it names the first part of a dotted"
            f" import it cannot find, so {parent} itself is there)."
        ),
        cause=(
            f"The {top} that ran is a release without {dotted}: the code was written for a release that has"
            " it (added later than the installed one, or moved or removed since)."
        ),
        fix=(
            f"Install the {top} release the code needs (its requirements file or README; for a module added"
            f" later, pip install -U {distribution}, with the torch it is built for where it is a torch"
            f" library); pip show {distribution} shows the installed one."
        ),
    )


def _attribute_missing(match: re.Match[str], text: str) -> bool:
    module = match.group(1)
    frame = last_frame(text, match.start())
    read_by_library = frame is not None and frame.in_library
    return (read_by_library or frame is None) and _third_party(module.split(".")[0], text)


def _attribute(match: re.Match[str], text: str) -> Explanation:
    module, name = match.group(1), match.group(2)
    top = module.split(".")[0]
    distribution = (pip_name(top) or top).split(" ")[0]
    frame = last_frame(text, match.start())
    reader = f"{frame.package or 'An installed package'} ({frame.place})" if frame else "The code"
    return answer(
        title=f"The {top} that was imported has no {module}.{name}",
        meaning=f"{reader} looked up {name} on the module {module}, which has no such name.",
        cause=(
            f"The {top} that was imported is another release than the code reading it was written for: an"
            f" older one from before {name} was added (often a second install found first, such as a conda"
            f" package beside a pip one, or a user site-packages), or a newer one that renamed or removed it."
        ),
        fix=(
            f"Check which {top} runs (python -c \"import {top}; print({top}.__version__, {top}.__file__)\"),"
            f" remove a second install, and install the {distribution} version the calling package requires"
            f" (pip install -U {distribution}, or the pin in the project's requirements)."
        ),
    )


KNOWN = [
    known("release-without-module", NO_MODULE, _submodule, generic=True, when=_submodule_missing),
    known("release-without-name", ATTRIBUTE, _attribute, generic=True, when=_attribute_missing),
]
