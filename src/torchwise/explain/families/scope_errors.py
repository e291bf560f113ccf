"""Known errors of a local variable read before anything was assigned to it.

``UnboundLocalError: local variable 'x' referenced before assignment`` (Python 3.11+: "cannot
access local variable 'x' where it is not associated with a value") says the function assigns
``x`` somewhere, but on the path that ran no assignment happened: every branch that sets it was
skipped (an if/elif without else, a loop over nothing, a try whose body failed).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.families.user_code_errors import raised_here
from torchwise.explain.paste import at_user_line


def _unbound(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1) or match.group(2)
    at = at_user_line(text, match.start())
    return answer(
        title=f"{name} was read before it was assigned{at}",
        meaning=(
            f"The function assigns {name} only on some paths, and on the path that ran none of them"
            " executed, so the name has no value when it is read."
        ),
        cause=(
            f"{name} is set inside branches that all were skipped: an if/elif chain (often"
            " isinstance checks or a mode/model-name string) without an else that matched nothing for"
            " these inputs or this model (a wrapped model, another class or option value), a loop over"
            " an empty sequence, or a try block that failed before the assignment."
        ),
        fix=(
            f"Find the branches that assign {name} above that line and see why none ran for this input"
            " (print the value they test); give it a value on every path (an else that raises a clear"
            f" error naming the unexpected value, or {name} = None/default before the branches)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "unbound-local",
        r"UnboundLocalError: (?:local variable '(\w+)' referenced before assignment"
        r"|cannot access local variable '(\w+)' where it is not associated with a value)",
        _unbound,
        # raised inside a library it is that library's bug or version, not the user's branches
        when=raised_here,
    ),
]
