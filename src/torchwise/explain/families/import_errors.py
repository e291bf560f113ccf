"""Known errors of importing a name that the installed version of a package does not have.

``ImportError: cannot import name 'X' from 'pkg.module' (path)`` names both sides: the name and
the module that lacks it. Which side is the usual culprit follows from the name's grammar: a
private name (``_compare_version``) is a helper one package borrowed from another, which the
other's newer releases dropped; a public name was renamed or removed in one release or added in
a later one. The frame that imports it (an installed package, or the user's file) says who
depends on whom. Python's own "(most likely due to a circular import)" is a different cause.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import LIBRARY, last_frame, user_frame


def _importer(match: re.Match[str], text: str) -> str | None:
    """The installed package whose code runs the import, from the frame above the error."""
    frame = last_frame(text, match.start())
    return frame.package if frame else None


# A module of Python's own library: lib/python3.8/typing.py, or Python38\Lib\typing.py on Windows
STANDARD_LIBRARY = re.compile(
    r"[\\/][Ll]ib[\\/]python(\d\.\d+)[\\/](?!(?:site|dist)-packages)|[Pp]ython(\d)(\d+)[\\/]Lib[\\/](?!site-packages)"
)


def _location(match: re.Match[str], text: str) -> str:
    """What Python printed in brackets after the module: its file, or ``unknown location``."""
    line_end = text.find("\n", match.end())
    found = re.match(r"\s*\(([^)\n]+)\)", text[match.end() : line_end if line_end >= 0 else len(text)])
    return found.group(1).strip() if found else ""


def _not_the_installed_package(name: str, module: str, location: str) -> Explanation | None:
    """The module Python found is not an installed release of the package: a namespace folder
    (``unknown location``: a folder without ``__init__.py``) or a file outside site-packages."""
    package = module.split(".")[0]
    stdlib = STANDARD_LIBRARY.search(location)
    if stdlib:
        version = stdlib.group(1) or f"{stdlib.group(2)}.{stdlib.group(3)}"
        return answer(
            title=f"Python {version}'s {module} has no {name}",
            meaning=f"{module} is Python's standard library (here {location}), and this Python's has no {name}.",
            cause=(
                f"The code was written for a newer Python than {version}: {name} was added to {module}"
                " in a later Python release."
            ),
            fix=(
                "Run it with the Python the project requires (a newer one)"
                + (
                    f", or import {name} from typing_extensions (pip install -U typing_extensions)."
                    if module == "typing"
                    else "."
                )
            ),
        )
    if location == "unknown location":
        found = (
            f"{module} resolved to a folder with no __init__.py (a namespace package), not to the"
            f" installed {package}: a folder named {package} (or {module.replace('.', '/')}) in the"
            f" working directory or on sys.path shadows it, or the install is broken (files of"
            " an interrupted or partial install, a source install that did not finish)."
        )
    elif location and not LIBRARY.search(location) and re.search(r"[\\/]", location):
        found = (
            f"Python imported {module} from {location}, outside the installed packages: a local"
            f" copy or folder named {package} shadows the installed {package} (or the project runs"
            " from an old source checkout)."
        )
    else:
        return None
    return answer(
        title=f"{module} is not the installed {package}, so it has no {name}",
        meaning=f"Python imported {module} but found no name {name} in it.",
        cause=found,
        fix=(
            f"Find what Python imports: python -c \"import {package}; print({package}.__file__,"
            f" {package}.__path__)\"; rename or move the local folder that shadows it (and its"
            f" __pycache__), or reinstall cleanly: pip uninstall {package} (until none is left),"
            f" then pip install {package} again, in the environment that runs the code."
        ),
    )


def _projects_own(module: str, location: str, text: str, before: int) -> bool:
    """The module that lacks the name sits in the folder of the user's own file that imports it
    (``/proj/utils/__init__.py`` imported by ``/proj/train.py``): the project's own module, not a
    copy shadowing an installed package, and its missing name is the project's own matter."""
    package = module.split(".")[0]
    root = re.match(rf"(.*?)[\\/]{re.escape(package)}(?:[\\/]|\.py\b)", location)
    frame = user_frame(text, before)
    if root is None or frame is None or not re.match(r"[A-Za-z]:[\\/]|[\\/]", frame.file):
        return False
    return bool(root.group(1)) and re.split(r"[\\/]", frame.file)[:-1] == re.split(r"[\\/]", root.group(1))


def _cannot_import(match: re.Match[str], text: str) -> Explanation | None:
    name, module = match.group(1), match.group(2)
    package = module.split(".")[0]
    location = _location(match, text)
    if not _not_circular(match, text) or _projects_own(module, location, text, match.start()):
        # a cycle is another cause; the project's own module missing a name does not say why
        return None
    shadowed = _not_the_installed_package(name, module, location)
    if shadowed:
        return shadowed
    importer = _importer(match, text)
    by = f"{importer}" if importer and importer != package else "the code that imports it"
    if name.startswith("_"):
        cause = (
            f"{name} is a private helper of {package}, and {by} was written against a {package}"
            f" that had it; the installed {package} is a newer release that removed or moved it"
            " (private names change without notice)."
        )
        fix = (
            f"Install the older {package} release {by} was made with (the version the"
            f" project's requirements or environment file pins: pip install '{package}==<that"
            f" version>'), or upgrade {by} to a release that supports the installed {package}."
            f" pip show {package} shows the installed version."
        )
    else:
        cause = (
            f"The installed {package} has no {name} in {module}: {by} was written for another"
            f" {package} release, in which {name} existed (renamed or removed since) or was added"
            " later than the installed one."
        )
        fix = (
            f"Install the {package} version {by} requires (its requirements file; pip show"
            f" {package} shows the installed one), or change the import to where the installed"
            f" {package} keeps {name}."
        )
    return answer(
        title=f"{module} has no {name} in the installed {package}",
        meaning=f"Python imported {module} but found no name {name} in it.",
        cause=cause,
        fix=fix,
    )


def _not_circular(match: re.Match[str], text: str) -> bool:
    line_end = text.find("\n", match.end())
    rest = text[match.end() : line_end if line_end >= 0 else len(text)]
    return "circular import" not in rest


KNOWN: list[KnownError] = [
    told_apart(
        "cannot-import-name",
        r"cannot import name '(\w+)' from '([\w.]+)'?",  # the closing quote is often lost in a paste
        _cannot_import,
        generic=True,  # Python's wording: a torch message in the same paste (compile) says more
    ),
]
