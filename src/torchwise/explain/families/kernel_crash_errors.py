"""Known errors of a GPU kernel that crashed (an illegal memory access, an unspecified launch
failure, a misaligned address), answered only where the paste says whose kernel it was.

The message names no cause: an index out of range in one of torch's indexing kernels, a
compiled extension's own kernel (built for another GPU, CUDA or torch, or with a bug), and rarely
the hardware all print it. The paste tells them apart by the operation that raised (an
embedding, a gather or scatter) or by the extension's frame, kernel name or own CUDA check.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.families.gpu_arch_errors import extension_launch
from torchwise.explain.paste import last_frame

MEANING = (
    "A GPU kernel crashed. CUDA reports errors asynchronously, so the line in the traceback is"
    " often not the one that failed, and the CUDA context is unusable until the process restarts."
)
INDEXING = re.compile(
    r"\bembedding\b|\bgather\b|\bscatter\w*|\bindex_select\b|\bindex_add\w*|\bnll_loss\w*|cross_entropy"
)


def _kernel_failure(match: re.Match[str], text: str) -> Explanation | None:
    what = match.group(0).rstrip(" .:")
    launch = extension_launch(match, text)
    if launch is not None:
        package, where = launch
        return answer(
            title=f"A CUDA kernel of a compiled extension{f' ({package})' if package else ''} failed: {what}",
            meaning=f"{MEANING} The failing kernel is the extension's own ({where}).",
            cause=(
                "The extension's compiled code does not fit this setup: built with another CUDA"
                " toolkit, torch or GPU architecture than the ones it runs with, or a bug of the"
                " extension for these inputs."
            ),
            fix=(
                "Rebuild it in this environment with the CUDA toolkit of torch's CUDA"
                " (python -c \"import torch; print(torch.version.cuda)\") and this GPU in"
                " TORCH_CUDA_ARCH_LIST (pip install --no-build-isolation --no-cache-dir .), or use"
                " the CUDA/torch versions the extension's project names; rerun with"
                " CUDA_LAUNCH_BLOCKING=1 to confirm the failing kernel."
            ),
        )
    frame = last_frame(text, match.start())
    indexing = frame is not None and INDEXING.search(f"{frame.function} {frame.source}")
    if not indexing:
        return None  # torch's kernel or an extension's, an index or a bug: the paste does not say
    return answer(
        title=f"A CUDA kernel failed: {what}",
        meaning=MEANING,
        cause=(
            f"An index out of range in an indexing kernel ({frame.place}: {frame.source}): an"
            " embedding id >= num_embeddings, a label >= the number of classes, or a gather/scatter"
            " index past the dimension."
        ),
        fix=(
            "Rerun with CUDA_LAUNCH_BLOCKING=1 to get the failing line, or run the same batch on"
            " the CPU, where an index error is reported plainly. Check ids and labels:"
            " assert ids.max() < emb.num_embeddings and y.max() < num_classes."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart(
        "cuda-kernel-failure",
        r"an illegal memory access was encountered|unspecified launch failure"
        r"|misaligned address|cuda runtime error \(710\)",
        _kernel_failure,
        generic=True,
    ),
]
