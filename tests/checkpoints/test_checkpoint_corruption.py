"""Any damage to a checkpoint is a CheckpointError: never another exception, never a load."""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from safetensors.torch import save_file

from torchwise.checkpoints import meta_file
from torchwise.checkpoints.checkpoint import (
    find_checkpoint,
    load_checkpoint,
    save_checkpoint,
    verify_checkpoint,
)
from torchwise.checkpoints.state_codec import unflatten_state
from torchwise.errors import CheckpointError

FILES = ("model.safetensors", "state.safetensors", "meta.json")
TENSOR_FILES = FILES[:2]
Corruption = Callable[[Path, st.DataObject], None]


def write_checkpoint(last: Path) -> Path:
    torch.manual_seed(0)
    embed = torch.randn(6, 4)
    save_checkpoint(
        last,
        model_state={"embed.weight": embed, "head.weight": embed, "head.bias": torch.zeros(6)},
        training_state={
            "optimizer": {
                "state": {0: {"step": torch.tensor(3.0), "exp_avg": torch.randn(6, 4)}},
                "param_groups": [{"lr": 0.1, "betas": (0.9, 0.99), "params": [0]}],
            },
            "rng": {"numpy": np.random.RandomState(0).get_state(), "torch": torch.get_rng_state()},
            "best": math.inf,
            "step": 3,
        },
        meta={"config_hash": "abc123", "step": 3},
    )
    return find_checkpoint(last)


def truncate(folder: Path, data: st.DataObject) -> None:
    path = folder / data.draw(st.sampled_from(FILES))
    raw = path.read_bytes()
    path.write_bytes(raw[: data.draw(st.integers(0, len(raw) - 1))])


def flip_bit(folder: Path, data: st.DataObject) -> None:
    path = folder / data.draw(st.sampled_from(FILES))
    raw = bytearray(path.read_bytes())
    raw[data.draw(st.integers(0, len(raw) - 1))] ^= 1 << data.draw(st.integers(0, 7))
    path.write_bytes(bytes(raw))


def append(folder: Path, data: st.DataObject) -> None:
    path = folder / data.draw(st.sampled_from(FILES))
    path.write_bytes(path.read_bytes() + data.draw(st.binary(min_size=1, max_size=16)))


def delete(folder: Path, data: st.DataObject) -> None:
    (folder / data.draw(st.sampled_from(FILES))).unlink()


def garbage_meta(folder: Path, data: st.DataObject) -> None:
    json_text = st.recursive(st.none() | st.integers() | st.text(), st.lists, max_leaves=5).map(
        lambda value: json.dumps(value).encode()
    )
    raw = data.draw(st.binary(max_size=64) | json_text | st.sampled_from([b"{}", b"NaN", b"[]"]))
    (folder / "meta.json").write_bytes(raw)


def swap_tensor_files(folder: Path, data: st.DataObject) -> None:
    model, state = (folder / name for name in TENSOR_FILES)
    model_bytes = model.read_bytes()
    model.write_bytes(state.read_bytes())
    state.write_bytes(model_bytes)


def delete_folder(folder: Path, data: st.DataObject) -> None:
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()  # the link now points nowhere


def resealed(edit: Callable[[dict[str, Any], st.DataObject, Path], None]) -> Corruption:
    """An edit of meta.json with its own checksum recomputed, as a buggy writer could make:
    the checks behind the checksum must catch it."""

    def corrupt(folder: Path, data: st.DataObject) -> None:
        document = meta_file.read_meta_file(folder / "meta.json")
        edit(document, data, folder)
        meta_file.write_meta(folder / "meta.json", document)

    corrupt.__name__ = f"resealed_{edit.__name__}"
    return corrupt


def tensor_nodes(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [node] if "$tensor" in node or "$ndarray" in node else []
        return found + [n for value in node.values() for n in tensor_nodes(value)]
    if isinstance(node, list):
        return [n for value in node for n in tensor_nodes(value)]
    return []


def drop_reference(document: dict[str, Any], data: st.DataObject, folder: Path) -> None:
    node = data.draw(st.sampled_from(tensor_nodes(document["training_state"])))
    node.clear()  # {} decodes as an empty dict: the tensor is left unnamed


def rename_reference(document: dict[str, Any], data: st.DataObject, folder: Path) -> None:
    node = data.draw(st.sampled_from(tensor_nodes(document["training_state"])))
    tag = "$tensor" if "$tensor" in node else "$ndarray"
    node[tag] = data.draw(st.text(max_size=8).filter(lambda name: name != node[tag]))


def add_reference(document: dict[str, Any], data: st.DataObject, folder: Path) -> None:
    document["training_state"]["extra"] = {"$tensor": data.draw(st.text(max_size=8))}


def edit_checksum(document: dict[str, Any], data: st.DataObject, folder: Path) -> None:
    entry = document["files"][data.draw(st.sampled_from(TENSOR_FILES))]
    field = data.draw(st.sampled_from(["sha256", "size"]))
    new = data.draw(st.text("0123456789abcdef", min_size=64, max_size=64) | st.integers())
    if new == entry[field]:
        new = None
    entry[field] = new


def random_skeleton(document: dict[str, Any], data: st.DataObject, folder: Path) -> None:
    document["training_state"] = data.draw(skeletons)


def drop_field(document: dict[str, Any], data: st.DataObject, folder: Path) -> None:
    keys = ["format", "format_version", "files", "model_aliases", "training_state"]
    del document[data.draw(st.sampled_from(keys))]


def bad_field(document: dict[str, Any], data: st.DataObject, folder: Path) -> None:
    key = data.draw(st.sampled_from(["format", "format_version", "files", "model_aliases"]))
    values = [
        0,
        -1,
        "1",
        True,
        None,
        [],
        {},
        {"head.weight": "nope"},
        {"embed.weight": "head.bias"},
    ]
    value = data.draw(st.sampled_from(values))
    assume((key, value) != ("model_aliases", {}))  # valid: a model without tied weights
    document[key] = value


def forge_state_file(document: dict[str, Any], data: st.DataObject, folder: Path) -> None:
    """A valid tensor file with other names, its checksum updated to match."""
    path = folder / "state.safetensors"
    save_file({data.draw(st.text(min_size=1, max_size=8)): torch.zeros(2)}, path)
    document["files"]["state.safetensors"] = {
        "sha256": meta_file.sha256_file(path),
        "size": path.stat().st_size,
    }


dtypes = st.sampled_from(
    ["<u4", "|u1", "<f8", "|b1", "<M8[ns]", "O", "V8", "(2,)i4", ""]
) | st.text(max_size=4)
tagged = (
    st.fixed_dictionaries(
        {
            "$ndarray": st.sampled_from(["t", "u", "missing"]),
            "dtype": dtypes,
            "shape": st.lists(st.integers(-1, 8), max_size=3) | st.integers(),
        }
    )
    | st.fixed_dictionaries({"$npscalar": dtypes, "hex": st.text("0123456789abcdefx", max_size=18)})
    | st.fixed_dictionaries({"$tensor": st.sampled_from(["t", "u", "missing"]) | st.integers()})
    | st.fixed_dictionaries({"$float": st.sampled_from(["nan", "inf", "-inf", "NaN", "1"])})
)
skeletons = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4)
    | tagged,
    lambda children: (
        st.lists(children, max_size=3)
        | st.fixed_dictionaries({"$tuple": st.lists(children, max_size=3)})
        | st.fixed_dictionaries({"$dict": st.lists(st.lists(children, max_size=3), max_size=3)})
        | st.dictionaries(
            st.sampled_from(["$tuple", "$dict", "$float", "$tensor", "dtype", "hex", "a"])
            | st.text(max_size=3),
            children,
            max_size=3,
        )
    ),
    max_leaves=10,
)


CORRUPTIONS: list[Corruption] = [
    truncate,
    flip_bit,
    append,
    delete,
    garbage_meta,
    swap_tensor_files,
    delete_folder,
    *map(
        resealed,
        [
            drop_reference,
            rename_reference,
            add_reference,
            edit_checksum,
            random_skeleton,
            drop_field,
            bad_field,
            forge_state_file,
        ],
    ),
]


# Each kind runs several times, every one of them at least once: 75 corrupted checkpoints.
@pytest.mark.parametrize("corrupt", CORRUPTIONS, ids=lambda corrupt: corrupt.__name__)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_any_corruption_is_a_checkpoint_error(corrupt: Corruption, data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        last = Path(tmp) / "last"
        folder = write_checkpoint(last)
        corrupt(folder, data)
        with pytest.raises(CheckpointError) as error:
            load_checkpoint(last)
        assert error.value.hint
        with pytest.raises(CheckpointError):
            verify_checkpoint(last)


@settings(max_examples=60, deadline=None)
@given(skeleton=skeletons)
def test_unflatten_of_any_json_is_a_value_or_a_checkpoint_error(skeleton: Any) -> None:
    # The assertion is what escapes: any exception but CheckpointError (a KeyError, a TypeError
    # from inside the codec) fails the test.
    try:
        unflatten_state({"t": torch.zeros(2), "u": torch.zeros(8, dtype=torch.uint8)}, skeleton)
    except CheckpointError:
        pass


def test_an_intact_checkpoint_loads(tmp_path: Path) -> None:
    write_checkpoint(tmp_path / "last")
    loaded = load_checkpoint(tmp_path / "last")
    assert loaded.model_state["head.weight"] is loaded.model_state["embed.weight"]
    assert loaded.training_state["best"] == math.inf
