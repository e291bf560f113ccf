"""Known errors of a diffusers pipeline loaded from a repository made for another pipeline.

``DiffusionPipeline.from_pretrained`` builds each component the pipeline class's ``__init__``
declares from the repository's ``model_index.json``; where the repository (or the call's keyword
arguments) lacks some, it raises "Pipeline <class X> expected {...}, but only {...} were passed."
The two sets name what is missing: a repository for another pipeline class (another model family
or task), a component left out on purpose (``safety_checker``) or a diffusers release whose pipeline
declares components the repository predates.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _names(group: str) -> set[str]:
    return set(re.findall(r"'(\w+)'", group))


def _components(match: re.Match[str], text: str) -> Explanation:
    pipeline = match.group(1).rsplit(".", 1)[-1]
    expected, passed = _names(match.group(2)), _names(match.group(3))
    missing = sorted(expected - passed)
    listed = ", ".join(missing) or "some components"
    optional = set(missing) <= {"safety_checker", "feature_extractor", "image_encoder", "requires_safety_checker"}
    # one or two of many missing: the same pipeline, whose component was renamed between releases
    renamed = not optional and len(missing) <= max(1, len(expected) // 4)
    return answer(
        title=f"{pipeline} needs components the repository does not hold: {listed}",
        meaning=(
            f"from_pretrained builds every component {pipeline}.__init__ declares from the"
            f" repository's model_index.json and the call's arguments; {listed} came from neither."
        ),
        cause=(
            f"The repository was saved without {listed}, which {pipeline} declares (left out on purpose"
            " to save space or for a safety checker), or the diffusers release declares them where the"
            " repository predates it."
            if optional
            else f"The repository was saved for another diffusers release of {pipeline}: its"
            f" model_index.json names {listed} otherwise (a component renamed between releases) or"
            " predates it, so the installed diffusers does not find it."
            if renamed
            else f"The repository was made for another pipeline class than {pipeline} (another model"
            f" family or task: its model_index.json names its own class and components), so {listed}"
            " are not in it; or the pipeline code and the installed diffusers are from different releases."
        ),
        fix=(
            f"Pass the missing ones to from_pretrained ({', '.join(m + '=None' for m in missing)} where"
            " the pipeline allows it, or the component loaded from its own repository); or load the"
            " repository with the class its model_index.json names (_class_name), or a repository made"
            f" for {pipeline}, with the diffusers version the pipeline code expects."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "pipeline-components-missing",
        r"Pipeline <class '([\w.]+)'> expected (\{[^}]*\}), but only (\{[^}]*\}|set\(\)) were passed",
        _components,
    ),
]
