"""Known errors of PyTorch Geometric's DataLoader given one graph instead of a dataset of graphs.

torch_geometric's DataLoader (and torch's random_split) index what they are given with integers:
dataset[0], dataset[1], ... A single graph (a ``Data`` object, such as ``dataset[0]`` of Planetoid)
is not a list of graphs: its ``__getitem__`` looks an integer up as an attribute name, which
raises ``KeyError: 0`` (PyG 2.x's storage) or, in PyG 1.x, ``TypeError: getattr(): attribute name
must be string``.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

# the code in the paste hands something to a loader or a split that indexes it with integers
INDEXED = re.compile(r"\b(?:DataLoader|random_split|NeighborLoader)\(\s*(\w+)")


def _pyg_in_paste(match: re.Match[str], text: str) -> bool:
    # PyG named, or a Data object printed as PyG prints it: Data(x=[6911, 50000], ...)
    pyg = re.search(r"torch_geometric|\bPyG\b|\bData\((?:\w+=\[[\d, ]*\],? ?)+\)", text)
    return bool(pyg and INDEXED.search(text))


def _single_graph(match: re.Match[str], text: str) -> Explanation:
    given = INDEXED.search(text)
    name = given.group(1) if given else "data"
    one = re.search(rf"\b{re.escape(name)}\s*=\s*(\w+\[\d+\]|Data\()", text)
    seen = f" ({name} = {one.group(1)}...)" if one else ""
    return answer(
        title="A DataLoader was given one graph, not a dataset of graphs",
        meaning=(
            "PyG's DataLoader (like random_split) takes a dataset or a list of Data objects and"
            " indexes it with integers; a single Data object reads an integer index as an"
            " attribute name and fails."
        ),
        cause=(
            f"The loader gets {name}, one graph{seen}, as if it were a dataset: for node-level"
            " tasks on one graph (Planetoid's Cora/CiteSeer) there is only dataset[0]."
        ),
        fix=(
            f"Pass the dataset (DataLoader(dataset, ...)) or a list ([{name}]); for one large graph"
            " train full-batch on it with the train/val/test masks, or sample subgraphs with"
            f" torch_geometric.loader.NeighborLoader({name}, num_neighbors=[...], batch_size=...)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "pyg-single-graph-loader",
        r"KeyError: \d+\b|getattr\(\): attribute name must be string",
        _single_graph,
        when=_pyg_in_paste,
    ),
]
