"""Known errors of a None handed from the user's line into a library call.

``AttributeError: 'NoneType' object has no attribute 'x'`` raised inside an installed package,
where the frame above is the user's own line calling it, says that something the user passed is
None: the library's line names its parameter (``model.peft_config``) and the user's call names
what was given for it (``get_peft_model_state_dict(unet)``). (Raised at the user's own line, the
same message is read by ``none-attribute``.)
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import last_frame, user_frame


def _given(call_source: str, function: str, parameter: str) -> str | None:
    """What the user's call passed for ``parameter``: the keyword of that name, or the only argument."""
    call = re.search(rf"\b{re.escape(function)}\(([^()]*)\)", call_source)
    if call is None:
        return None
    arguments = [part.strip() for part in call.group(1).split(",") if part.strip()]
    for argument in arguments:
        if argument.startswith(f"{parameter}="):
            return argument.split("=", 1)[1].strip()
    positional = [argument for argument in arguments if "=" not in argument]
    return positional[0] if len(positional) == 1 and len(arguments) == 1 else None


def _none_passed(match: re.Match[str], text: str) -> Explanation | None:
    attribute = match.group(1)
    inner, mine = last_frame(text, match.start()), user_frame(text, match.start())
    if inner is None or mine is None or inner == mine or not inner.in_library or not mine.source:
        return None
    owner = re.search(rf"\b(\w+)\.{re.escape(attribute)}\b", inner.source)
    if owner is None:
        return None
    given = _given(mine.source, inner.function, owner.group(1))
    if given is None:
        return None
    return answer(
        title=f"{given} is None where {inner.function} reads its .{attribute} ({mine.place}: {mine.source})",
        meaning=(
            f"The line {mine.source} passes {given} to {inner.function}, which reads"
            f" {owner.group(1)}.{attribute} ({inner.source}); {given} was None."
        ),
        cause=(
            f"{given} was never set to an object on this path: a variable initialised to None and assigned"
            " only for some configurations (another model type or mode than this run uses, an optional"
            " component that was not loaded), or a function that returned nothing."
        ),
        fix=(
            f"Find where {given} is assigned before that line and why it is None in this run; pass the"
            f" object that exists for this configuration (the model actually trained or loaded), or skip"
            f" the call when {given} is None."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart("none-passed-to-library", r"'NoneType' object has no attribute '(\w+)'", _none_passed, generic=True),
]
