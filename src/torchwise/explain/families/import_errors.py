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

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import last_frame

PACKAGE_IN_PATH = re.compile(r"(?:site|dist)-packages[\\/]+([A-Za-z_]\w*)")


def _importer(match: re.Match[str], text: str) -> str | None:
    """The installed package whose code runs the import, from the frame above the error."""
    frame = last_frame(text, match.start())
    found = PACKAGE_IN_PATH.search(frame.file) if frame else None
    return found.group(1) if found else None


def _cannot_import(match: re.Match[str], text: str) -> Explanation:
    name, module = match.group(1), match.group(2)
    package = module.split(".")[0]
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
    known(
        "cannot-import-name",
        r"cannot import name '(\w+)' from '([\w.]+)'?",  # the closing quote is often lost in a paste
        _cannot_import,
        generic=True,  # Python's wording: a torch message in the same paste (compile) says more
        when=_not_circular,
    ),
]
