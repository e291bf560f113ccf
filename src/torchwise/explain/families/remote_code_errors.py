"""Known errors of loading a Hugging Face repository that ships its own Python code.

transformers' resolve_trust_remote_code (dynamic_module_utils) refuses to run code from a model
repository (a custom config, tokenizer or model class named in config.json's auto_map) unless
the call opts in with trust_remote_code=True. The wording changed over releases: "Loading X
requires you to execute the configuration file in that repo on your local machine ... set the
option `trust_remote_code=True`", "The repository X contains custom code which must be executed
to correctly load the model", "... references custom code contained in Y", and, when the
interactive prompt times out, "Loading this model requires you to execute custom code contained
in the model repository". Each from_pretrained (AutoConfig, AutoTokenizer, AutoModel*, pipeline)
decides on its own, so one call with the flag does not cover the next.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

LOADER = re.compile(r"(\b\w+)\s*=\s*((?:Auto\w+|\w+)\.from_pretrained\([^\n]*\)|pipeline\([^\n]*\))")


def _remote_code(match: re.Match[str], text: str) -> Explanation:
    calls = LOADER.findall(text)
    trusted = [name for name, call in calls if re.search(r"trust_remote_code\s*=\s*True", call)]
    untrusted = [(name, call) for name, call in calls if "trust_remote_code" not in call]
    if trusted and untrusted:
        name, call = untrusted[-1]
        cause = (
            f"trust_remote_code=True is passed to {', '.join(trusted)}'s from_pretrained but not"
            f" to {name} = {call.split('(')[0]}(...): each from_pretrained decides on its own, so"
            " the call without the flag refuses the repository's code"
            + (" (unless the **kwargs it passes carry it)." if "**" in call else ".")
        )
        fix = f"Pass trust_remote_code=True to that call too: {call.split('(')[0]}(..., trust_remote_code=True)."
    else:
        cause = (
            "The model repository ships its own modelling code (config.json's auto_map names"
            " custom classes), and the from_pretrained / pipeline call that raised did not opt in;"
            " for a training script or framework, its trust_remote_code option was not set."
        )
        fix = (
            "Read the repository's code, then pass trust_remote_code=True to every"
            " from_pretrained of that repository (AutoConfig, AutoTokenizer, AutoModel*, pipeline),"
            " or the tool's --trust_remote_code option; or upgrade transformers if the architecture"
            " has since been added to it."
        )
    return answer(
        title="The model repository has its own code and the call did not allow it (trust_remote_code)",
        meaning=(
            "transformers only runs Python code downloaded with a model when the call passes"
            " trust_remote_code=True; this call did not, so loading stopped."
        ),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "trust-remote-code",
        r"requires you to execute (?:the \w+ file in that repo|custom code contained in the model repository)"
        r"|contains custom code which must be executed to correctly load the model"
        r"|references custom code contained in \S+ which must be executed",
        _remote_code,
    ),
]
