"""Known errors of torch sparse tensors reaching operations that only have dense kernels."""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _sparse_layout(match: re.Match[str], text: str) -> Explanation:
    layout = match.group(1) or "Sparse"
    return answer(
        title=f"A {layout} tensor reached an operation that only takes dense tensors",
        meaning=(
            "Elementwise comparisons, torch.where, indexing and most operations have no kernel for"
            f" torch's sparse layout; one of the inputs is a {layout} tensor."
        ),
        cause=(
            "A tensor was made sparse upstream even if the data looks dense: an adjacency or"
            " feature matrix built with torch.sparse_coo_tensor / .to_sparse() (or converted from"
            " a scipy.sparse matrix) by the data loading code, then used with dense operations."
        ),
        fix=(
            "Make it dense before those operations (adj = adj.to_dense(), once, where it is"
            " loaded), or keep it sparse and use the sparse-aware ops (torch.sparse.mm,"
            " torch.sparse.softmax) instead."
        ),
    )


KNOWN: list[KnownError] = [
    known("sparse-layout-unsupported", r"unsupported tensor layout: (Sparse\w*)", _sparse_layout, re.IGNORECASE),
]
