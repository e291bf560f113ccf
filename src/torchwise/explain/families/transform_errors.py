"""Known errors of torchvision transforms given another kind of image than they take: a tensor
to a transform of an old torchvision that takes PIL images only, a tensor to ToTensor().
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _wants_pil(match: re.Match[str], text: str) -> Explanation:
    if match.group(1):  # ToTensor / to_tensor: "pic should be PIL Image or ndarray"
        return answer(
            title="ToTensor() was given what is already a tensor",
            meaning="transforms.ToTensor() converts a PIL image or a NumPy array; it got a torch.Tensor.",
            cause=(
                "The data is already a tensor (a dataset that returns tensors, a transform"
                " before it that made one, or ToTensor() listed twice) and ToTensor() runs again."
            ),
            fix=(
                "Remove ToTensor() from the Compose for tensor inputs (keep Normalize, which takes"
                " tensors); or convert tensors with transforms.ToPILImage() first where a PIL-only"
                " transform follows."
            ),
        )
    return answer(
        title="A torchvision transform that takes PIL images got a tensor",
        meaning=(
            "In torchvision before 0.8 the functional transforms (resize, crop, rotate) take PIL"
            " images only; this one got a torch.Tensor."
        ),
        cause=(
            "The installed torchvision is older than the code (tensor inputs came in 0.8), or the"
            " transform runs after ToTensor() in the Compose."
        ),
        fix=(
            "Upgrade torchvision (with its matching torch), or apply the PIL transforms before"
            " ToTensor() (or convert with ToPILImage() first)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "transform-input-type",
        r"img should be PIL Image\. Got <class 'torch\.Tensor'>"
        r"|(pic) should be PIL Image or ndarray\. Got <class 'torch\.Tensor'>",
        _wants_pil,
    ),
]
