"""Known errors of timm's model registry.

timm.create_model(name) looks the name up in a registry that only the @register_model decorator
fills, when the module defining the model is imported; a name not in it raises
"RuntimeError: Unknown model (name)" (timm/models/_factory.py, factory.py before 0.9). Models of
a repository (a paper's backbone registered with timm's decorator) exist only once that
repository's module has been imported; names with a pretrained tag ("convnext_base.fb_in22k")
or an "hf-hub:" prefix need timm 0.9 or newer.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

LIST = "timm.list_models('{stem}*') lists the names this install knows"


def _through_timm(match: re.Match[str], text: str) -> bool:
    return bool(re.search(r"\btimm\b|create_model", text))


def _unknown_model(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1)
    stem = re.split(r"[._-]", name.split(":")[-1].split("/")[-1])[0]
    listing = LIST.format(stem=stem)
    if re.search(r"hf[-_]hub:|\.\w+$", name):
        cause = (
            f"The name carries a pretrained tag or a Hub prefix ({name}), which timm only reads"
            " from 0.9 on; the installed timm is older."
        )
        fix = f"pip install -U timm (0.9 or newer), or use the bare architecture name; {listing}."
    else:
        cause = (
            f"No imported module registered {name}. If it is a repository's own model (a paper's"
            " backbone registered with timm's @register_model), the module that defines it was"
            " not imported before create_model: the registration only runs on import (a script"
            " other than the repository's main, a missing import in the package's __init__.py)."
            " If it is one of timm's own models, the installed timm predates it (or the name is"
            " misspelt)."
        )
        fix = (
            "Import the module that defines the model before create_model (e.g. `import models`"
            f" or `from models import *` as the repository's training script does); {listing};"
            " upgrade timm for a model added in a later release."
        )
    return answer(
        title=f"timm does not know a model named {name}",
        meaning=(
            "create_model looks the name up in timm's registry, which holds only the models whose"
            " defining module has been imported (each registers itself with @register_model)."
        ),
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "timm-unknown-model",
        r"Unknown model \((?!%s)([^()\s]+)\)",
        _unknown_model,
        when=_through_timm,
    ),
]
