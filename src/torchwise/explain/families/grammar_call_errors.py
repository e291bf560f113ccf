"""``f() missing N required positional argument(s): 'a' and 'b'`` read from who made the call.

Python raises it at the call, before ``f`` runs, so the traceback's last frame is the caller's
line, and three things in the paste name the cause, whichever library is involved:

* the argument missing is ``self``: ``f`` was reached through a class, not an object of it (a
  callback class passed where the library expects an instance);
* the caller's line spreads one value into the call (``self.collate(*batch)``) and parameters got
  nothing: that value held fewer items than ``f`` takes, or none (an iterator read once already);
* the caller is an installed package, and the traceback runs through two or more packages below
  the user's last line: one package calls a hook of another with the signature of another
  release (``on_init_end() missing 'trainer'``, SetFit against sentence-transformers 4). A function
  written in C counts instead (``function takes exactly 1 argument (3 given)``, torchvision's fill
  handed to PIL's core): the same reading, read from the same frames.

Anything else (a call in the user's own code, a library calling the user's own function) is left
alone here: the message alone does not say which side is wrong.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import Frame, frames, last_frame

MISSING = (
    r"TypeError: (?:([\w.]+)\.)?(\w+)\(\) missing (\d+) required positional arguments?:"
    r" ((?:'\w+'(?:,? and |, )?)+)"
)
# Entries of their own read these: DataParallel's empty replica and a class's constructor.
OWN_READINGS = {"forward", "__init__"}
# Where a library hands the user's class over: callbacks=[MyCallback] (no call).
CLASS_GIVEN = re.compile(r"\b(?:callbacks|plugins|hooks|loggers?|handlers)\s*=\s*\[[^\]]*?\b([A-Z]\w*)\s*(?=[,\]])")


def _missing(match: re.Match[str]) -> list[str]:
    return re.findall(r"'(\w+)'", match.group(4))


def _class_given(text: str, before: int) -> str | None:
    for _, frame in frames(text[:before]):
        found = CLASS_GIVEN.search(frame.source)
        if found and not frame.in_library:
            return found.group(1)
    return None


def _through_class(function: str, missing: list[str], text: str, before: int) -> Explanation | None:
    given = _class_given(text, before)
    if missing != ["self"] and not (given and len(missing) == 1):
        return None
    named = f" ({given}, not {given}())" if given else ""
    return answer(
        title=f"{function}() was called on a class, not on an object of it{named}",
        meaning=(
            f"Python binds self only when a method is reached through an object; {function} was reached"
            f" through the class itself, so {'self' if missing == ['self'] else 'the first argument'} took the"
            f" place of self and '{missing[-1]}' got nothing."
        ),
        cause=(
            f"A class was passed where an object is expected{named}: a callback, hook or handler class given"
            " without creating it (callbacks=[MyCallback]), or a method called through its class"
            " (MyClass.method(x))."
        ),
        fix=(
            "Create the object and pass that: callbacks=[MyCallback()] (with its constructor's arguments), or"
            " call the method on an instance."
        ),
    )


def _starred(function: str, missing: list[str], frame: Frame) -> Explanation | None:
    call = re.search(rf"\b{re.escape(function)}\s*\(\s*\*\s*([\w.\[\]]+)\s*\)", frame.source)
    if frame.in_library or call is None:
        return None
    value = call.group(1)
    names = " and ".join(f"'{name}'" for name in missing)
    return answer(
        title=f"*{value} spread fewer values than {function}() takes ({frame.place})",
        meaning=(
            f"{frame.place} ({frame.source}) passes the items of {value} as {function}'s arguments, and"
            f" {names} got none: {value} held fewer items than {function} has parameters."
        ),
        cause=(
            f"{value} is shorter than the call expects, or empty. An iterator gives its items only once:"
            f" a zip, map or filter object (an iterator in Python 3, a list in Python 2) or a generator"
            f" that was already read, by an earlier loop or another *{value}, is empty the second time;"
            " otherwise the batch or sample holds fewer fields than the function was written for."
        ),
        fix=(
            f"Make {value} a list where it is built (list(zip(...))) so it can be read more than once, and"
            f" check len({value}) before the call; if it holds fewer fields, make the code that builds it"
            f" return what {function} takes."
        ),
    )


# Frames of torch in a framework's traceback are its plumbing (no_grad decorators, a module's _call_impl),
# not a party to the framework's hooks: a Lightning loop calling a LightningModule's hook runs through them.
PLUMBING = {"torch"}
# A package named with a version in the paste's prose: "sentence_transformers>=4.0", "transformers==4.46".
VERSIONED = re.compile(r"\b([A-Za-z][\w-]*[A-Za-z])\s*(?:>=|==|<=|~=|<|>)\s*\d")


def _packages_below_user(text: str, before: int) -> list[str]:
    """The installed packages in the frames after the user's last line, in order, each once (torch's
    plumbing left out)."""
    found = frames(text[:before])
    own = [number for number, (_, frame) in enumerate(found) if not frame.in_library]
    start = own[-1] + 1 if own else 0
    packages: list[str] = []
    for _, frame in found[start:]:
        if frame.package and frame.package not in packages and frame.package not in PLUMBING:
            packages.append(frame.package)
    return packages


def _handed_over(function: str, text: str, before: int) -> bool:
    """The function is the user's: its name is on one of the user's lines (``compute_metrics=compute_metrics``)
    or is a name a library is given a function under (``collate_fn``, ``<lambda>``)."""
    if function.startswith("<") or re.search(r"_fn$|^(?:compute_metrics|collate|preprocess|transform)", function):
        return True
    return any(not frame.in_library and re.search(rf"\b{re.escape(function)}\b", frame.source)
               for _, frame in frames(text[:before]))


def _between_packages(function: str | None, wanting: str, frame: Frame, text: str, before: int) -> Explanation | None:
    """``wanting`` says how the call differs from the installed definition: "without 'trainer'" (a Python
    function's missing parameters) or "with 3 arguments, not exactly 1" (a C function's count); ``function``
    is None where a C function does not name itself."""
    packages = _packages_below_user(text, before)
    if not frame.in_library or frame.package in (None, *PLUMBING) or len(packages) < 2:
        return None
    if function and _handed_over(function, text, before):
        return None  # the user's own function, passed in: the message does not say which side is wrong
    # a package the user's own words pin with a version (sentence_transformers>=4.0) is a party too
    pinned = [name for name in dict.fromkeys(VERSIONED.findall(text)) if name.replace("-", "_") not in packages]
    packages = packages + pinned
    listed = ", ".join(packages[:-1]) + f" and {packages[-1]}"
    called = f"{function}()" if function else "a function written in C"
    return answer(
        title=f"{frame.package} calls {called} {wanting}: packages of releases not made together",
        meaning=(
            f"{frame.place} ({frame.source}), in the installed {frame.package}, calls {called} {wanting}:"
            " the installed definition does not accept that call."
        ),
        cause=(
            f"The call and the definition come from releases with different signatures: of {listed} (the"
            f" traceback's packages{', and what the paste pins with a version' if pinned else ''}), one was"
            " upgraded (or pinned) without the others, so a hook or method that one package calls was given"
            " new parameters by another package's release."
        ),
        fix=(
            f"Install versions of {listed} that were released to work together: the ones the project pins, or"
            f" the newer package pinned back below the release that changed its signature (its release notes"
            f" say which; pip check shows declared conflicts), or upgrade {frame.package} to a release that"
            " supports it."
        ),
    )


def _call(match: re.Match[str], text: str) -> tuple[str, list[str], Frame | None] | None:
    function = match.group(2)
    return None if function in OWN_READINGS else (function, _missing(match), last_frame(text, match.start()))


def _class_reading(match: re.Match[str], text: str) -> Explanation | None:
    call = _call(match, text)
    return _through_class(call[0], call[1], text, match.start()) if call else None


def _starred_reading(match: re.Match[str], text: str) -> Explanation | None:
    call = _call(match, text)
    if call is None or call[2] is None or call[1] == ["self"]:
        return None
    return _starred(call[0], call[1], call[2])


def _packages_reading(match: re.Match[str], text: str) -> Explanation | None:
    call = _call(match, text)
    if call is None or call[2] is None or _class_given(text, match.start()) or "self" in call[1]:
        return None
    names = " and ".join(f"'{name}'" for name in call[1])
    return _between_packages(call[0], f"without {names}", call[2], text, match.start())


# A function written in C (a builtin, an extension's) counts its arguments in another wording and may not
# name itself: "encode() takes at most 2 arguments (3 given)", "function takes exactly 1 argument (3 given)".
C_COUNT = (
    r"TypeError: (?:(?:[\w.]+\.)?(?P<name>\w+)\(\)|function) takes (?P<bound>exactly|at most|at least)"
    r" (?P<takes>\d+) (?:positional )?arguments? \((?P<given>\d+) given\)"
)


# A tuple or list written out as a keyword's value on the user's line: fill=(0, 0, 0), size=[256, 256].
LITERAL = re.compile(r"=\s*[(\[]([^()\[\]]*)[)\]]")


def _user_literal_of(given: int, text: str, before: int) -> bool:
    """A C function counts a sequence's items as its arguments (a fill colour unpacked for a one-band
    image): a literal of exactly that many items on the user's own line is the user's value, not a
    release's call."""
    return any(
        not frame.in_library and len([item for item in literal.split(",") if item.strip()]) == given
        for _, frame in frames(text[:before])
        for literal in LITERAL.findall(frame.source)
    )


def _count_reading(match: re.Match[str], text: str) -> Explanation | None:
    """A C function's argument count, read like a missing parameter: only where an installed package makes
    the call and the traceback runs through two or more packages below the user's line."""
    function = match.group("name")
    frame = last_frame(text, match.start())
    if function in OWN_READINGS or frame is None or _user_literal_of(int(match.group("given")), text, match.start()):
        return None
    wanting = f"with {match.group('given')} arguments, not {match.group('bound')} {match.group('takes')}"
    return _between_packages(function, wanting, frame, text, match.start())


KNOWN: list[KnownError] = [
    told_apart("called-on-class", MISSING, _class_reading, generic=True),
    told_apart("starred-too-few", MISSING, _starred_reading, generic=True),
    told_apart("hook-between-packages", MISSING, _packages_reading, generic=True),
    told_apart("hook-between-packages", C_COUNT, _count_reading, generic=True),
]
