"""Known errors of transformers' Auto classes meeting a model type they do not know.

AutoConfig.from_pretrained (under every AutoModel*/AutoTokenizer/pipeline call) reads
``model_type`` from the checkpoint's config.json and looks it up in CONFIG_MAPPING. Before
transformers 4.37 a missing type surfaced as a bare ``KeyError: 'mistral'`` from
configuration_auto.py (``_LazyConfigMapping.__getitem__``); since then (pull request 27976) as
"The checkpoint you are trying to load has model type `mistral` but Transformers does not
recognize this architecture". Either the installed transformers predates that architecture, or the type is not
transformers' at all: a project's own model (LLaVA's llava_*, a repository's custom config)
that the project registers when its package is imported, or that ships code in the model
repository (trust_remote_code).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import IPYTHON_ARROW, last_frame

AUTO_CALL = re.compile(r"\bAuto\w+\.from_pretrained\(|\bpipeline\(")


def _in_config_lookup(match: re.Match[str], text: str) -> bool:
    """The KeyError comes from the config lookup: a configuration_auto frame, or a paste whose
    last frame is the user's Auto*.from_pretrained call (a notebook cell's ---> line); a title
    line that quotes the error before the traceback is read against the traceback after it."""
    if "configuration_auto" in text:
        return True
    frame = last_frame(text, match.start()) or last_frame(text)
    if frame:
        return bool(AUTO_CALL.search(frame.source))
    # an older IPython header ("/tmp/ipykernel_1/2.py in <module>") is no frame to paste.frames;
    # its "----> 4 model = ..." line still names the call that raised
    arrows = [IPYTHON_ARROW.match(line) for line in text.splitlines()]
    sources = [arrow.group(2) for arrow in arrows if arrow]
    return bool(sources and AUTO_CALL.search(sources[-1]))


def _unknown_model_type(match: re.Match[str], text: str) -> Explanation:
    model_type = match.group(1) or match.group(2)
    project = re.match(r"(llava|internvl|minicpm|qwen_vl|cogvlm)", model_type)
    cause = (
        f"The installed transformers does not have the architecture '{model_type}': it is older"
        " than the release that added it (llama came in 4.28, gpt_bigcode 4.28, mistral 4.34,"
        " mixtral 4.36, qwen2 4.37, gemma 4.38), or the type is not a transformers architecture"
        " but a project's own (registered by that project's package when it is imported, or"
        " shipped as code in the model repository)."
    )
    fix = (
        "pip install -U transformers (check the model card for the minimum version);"
        " for a project's own model type, import the project's package (or use its loader)"
        " before from_pretrained, or pass trust_remote_code=True if the repository ships"
        " modelling code."
    )
    if project:
        cause = (
            f"'{model_type}' is not a transformers architecture: it is registered by the project"
            " that defines it (its package must be installed and imported), or needs a much newer"
            " transformers."
        )
        fix = (
            "Load it with the project's own code (install the project and use its loader or"
            " import its model package before from_pretrained), or upgrade transformers if the"
            " architecture was added there since."
        )
    return answer(
        title=f"transformers does not know the model type '{model_type}'",
        meaning=(
            "from_pretrained read model_type from the checkpoint's config.json and found no"
            " configuration class for it in this transformers' registry (CONFIG_MAPPING)."
        ),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "transformers-unknown-model-type",
        r"KeyError: '([a-z][a-z0-9_-]*)'()",
        _unknown_model_type,
        when=_in_config_lookup,
    ),
    known(
        "transformers-unknown-model-type",
        r"()has model type `([^`\n]+)` but Transformers does not recognize this architecture",
        _unknown_model_type,
    ),
]
