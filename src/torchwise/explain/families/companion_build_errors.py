"""Known errors of a package that must be built for the installed torch and is not.

torchvision's compiled ops load only against the torch release they were built for: "Couldn't load
custom C++ ops. This can happen if your PyTorch and torchvision versions are incompatible" (a pair
from the compatibility matrix's other rows, a torch upgraded without torchvision, a CPU and a CUDA
variant mixed, two installs in one environment).

(``No module named 'triton'`` is not read here: xformers prints it inside a harmless notice with a
full traceback, so the words alone do not say that it stopped anything.)
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _torchvision_ops(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="torchvision's compiled ops do not load against this torch",
        meaning=(
            "torchvision's C++/CUDA ops (nms, roi_align, deform_conv...) are built for one torch release;"
            " the torch that is imported is another, so they cannot load."
        ),
        cause=(
            "torch and torchvision are not a matching pair: torch was upgraded (or downgraded) without"
            " torchvision, they come from different indexes (a CPU torchvision with a CUDA torch, pip over"
            " conda), or two installs are mixed in one environment."
        ),
        fix=(
            "Uninstall both (pip uninstall torch torchvision until none is left, conda remove pytorch"
            " torchvision) and install the pair from the compatibility matrix in one command from one index:"
            " pip install torch==X torchvision==Y --index-url https://download.pytorch.org/whl/<cu or cpu>;"
            " python -c 'import torch, torchvision; print(torch.__version__, torchvision.__version__)' checks it."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "torchvision-ops-incompatible",
        r"Couldn'?t load custom C\+\+ ops\. This can happen if your PyTorch and torchvision versions are incompatible",
        _torchvision_ops,
    ),
]
