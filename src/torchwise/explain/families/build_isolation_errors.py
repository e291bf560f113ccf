"""Known errors of installing a package whose build script imports torch in an isolated build.

pip (and uv) build a source package in a fresh, isolated environment holding only the build
requirements the package declares. flash-attn, mamba-ssm, causal-conv1d, apex, xformers and most
CUDA extensions import torch in their setup.py without declaring it, so the build fails at
"Getting requirements to build wheel" / ``get_requires_for_build_wheel`` with
``ModuleNotFoundError: No module named 'torch'`` although torch is installed.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

IN_BUILD = re.compile(r"get_requires_for_build_wheel|Getting requirements to build wheel|build_meta\.py|builds-v0")


def _torch_missing_in_build(match: re.Match[str], text: str) -> Explanation:
    # the package being built: uv's "Failed to build `x==1.0`", pip's "Collecting x" or the command
    package = re.search(
        r"Failed to build `?([A-Za-z][\w.\-]*?)(?:==[\w.]+)?`?(?:\s|$)|Building wheel for ([A-Za-z][\w.\-]*)"
        r"|Collecting ([A-Za-z][\w.\-]*)|pip install (?:-\S+ )*([A-Za-z][\w.\-]*)",
        text,
    )
    name = next((group for group in package.groups() if group), None) if package else None
    which = name or "the package"
    return answer(
        title=f"{name}'s build could not import torch: it was built in an isolated environment"
        if name
        else "A package's build could not import torch: it was built in an isolated environment",
        meaning=(
            f"pip/uv builds {which} from source in a fresh environment holding only the build"
            " requirements it declares; its setup script imports torch, which it does not declare,"
            " so the import fails there even though torch is installed."
        ),
        cause=(
            f"Build isolation (pip's and uv's default) with a package ({which}) that needs the installed"
            " torch at build time, or no prebuilt wheel for this Python/torch/CUDA so pip fell back to"
            " building from source."
        ),
        fix=(
            "Install torch first, then build against it without isolation: pip install"
            f" {name or '<package>'} --no-build-isolation (uv pip install --no-build-isolation ..., with"
            " packaging/ninja/wheel installed); or install the package's prebuilt wheel for this"
            " Python, torch and CUDA."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "build-isolation-no-torch",
        # the message is often cut in a paste ("No module name"); the build frame says where it ran
        r"ModuleNotFoundError: No module name(?:d 'torch')?|No module named [`'\"]torch[`'\"]",
        _torch_missing_in_build,
        when=lambda match, text: (
            bool(IN_BUILD.search(text))
            and not re.match(r"ModuleNotFoundError: No module named '(?!torch')", text[match.start() :])
        ),
    ),
]
