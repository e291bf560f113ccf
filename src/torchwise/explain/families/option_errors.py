"""Known errors of a value that is not among an option's choices: ``'x' is not a valid Name``
(Python's Enum; transformers adds ", please select one of [...]", listing the choices of the
installed release). Only a message that lists the choices is answered.

The value's distance from the listed choices tells the two usual causes apart: a near miss is a
misspelling; a value far from every choice is one that another release of the library knows (a
newer one added it: ``fsdp2``, an optimizer or scheduler name), so the installed release is older
than the code or the config that asks for it.
"""

from __future__ import annotations

import difflib
import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import last_frame


def _invalid_choice(match: re.Match[str], text: str) -> Explanation | None:
    value, option, listed = match.group(1), match.group(2), match.group(3) or ""
    choices = re.findall(r"['\"]([^'\"]+)['\"]", listed)
    if not choices:
        return None  # without the choices, a misspelling and another release's value look alike
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.75)
    frame = last_frame(text, match.start())
    library = frame.package if frame and frame.package else "the library that defines it"
    shown = f" ({', '.join(choices)})"
    if close:
        cause = f"'{value}' is a misspelling of '{close[0]}', one of the values {option} takes{shown}."
        fix = f"Write '{close[0]}' where the code or the config (a command-line flag, a YAML key) sets it."
    else:
        cause = (
            f"The installed release of {library} does not know '{value}' as a {option}: the code or"
            f" the config was written for another release, which has it (a newer one added it);"
            f" this one takes only {', '.join(choices)}."
        )
        fix = (
            f"Upgrade the package whose release notes add '{value}' (the tool passing it, or the"
            f" library defining {option}; the project's requirements name the versions), or use"
            " one of the values the installed release lists."
        )
    return answer(
        title=f"'{value}' is not one of the values {option} takes",
        meaning=f"{option} is an enumeration; the value given, '{value}', is not among its members{shown}.",
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    told_apart(
        "invalid-choice",
        r"ValueError: '?([\w.-]+)'? is not a valid (\w+)(?:, please select one of (\[[^\]\n]*\]))?",
        _invalid_choice,
    ),
]
