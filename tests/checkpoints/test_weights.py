from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from torchwise.checkpoints.weights import load_foreign_weights
from torchwise.errors import CheckpointError


def net() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def assert_weights_equal(a: torch.nn.Module, b: torch.nn.Module) -> None:
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y), name


class RunsCodeWhenUnpickled:
    """Stands for a malicious or merely custom object inside a .pt file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))  # unpickling would create the marker file


@pytest.mark.parametrize(
    "wrap",
    [
        lambda sd: sd,
        lambda sd: {"state_dict": sd},
        lambda sd: {"model": sd, "epoch": 3},
        lambda sd: {"model_state_dict": sd, "optimizer": {}},
    ],
    ids=["bare", "state_dict", "model", "model_state_dict"],
)
@pytest.mark.parametrize("suffix", [".pt", ".pth", ".bin"])
def test_torch_saved_state_dicts_load(tmp_path: Path, wrap: object, suffix: str) -> None:
    source = net()
    path = tmp_path / f"weights{suffix}"
    torch.save(wrap(source.state_dict()), path)  # type: ignore[operator]
    target = net()
    report = load_foreign_weights(target, path, strict=True)
    assert report.ok and len(report.loaded) == 4
    assert_weights_equal(source, target)


def test_safetensors_weights_load(tmp_path: Path) -> None:
    source = net()
    save_file(source.state_dict(), tmp_path / "w.safetensors")
    target = net()
    assert load_foreign_weights(target, tmp_path / "w.safetensors", strict=True).ok
    assert_weights_equal(source, target)


def test_a_pickled_custom_class_is_refused_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    torch.save(
        {"state_dict": net().state_dict(), "extra": RunsCodeWhenUnpickled(marker)},
        tmp_path / "evil.pt",
    )
    with pytest.raises(CheckpointError, match="weights_only=True") as error:
        load_foreign_weights(net(), tmp_path / "evil.pt", strict=False)
    assert "safetensors" in error.value.hint and "never" in error.value.hint
    assert not marker.exists()


def test_mismatches_are_reported_and_matching_weights_load(tmp_path: Path) -> None:
    source = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    state = source.state_dict()
    del state["0.bias"]
    state["extra.weight"] = torch.zeros(1)
    torch.save(state, tmp_path / "w.pt")
    target = net()
    untouched = {key: value.clone() for key, value in target.state_dict().items()}

    with pytest.raises(CheckpointError) as error:
        load_foreign_weights(target, tmp_path / "w.pt", strict=True)
    message = error.value.message
    assert "missing keys (1): ['0.bias']" in message
    assert "unexpected keys (1): ['extra.weight']" in message
    assert "2.weight: file [3, 8] vs model [2, 8]" in message
    assert "strict: false" in error.value.hint
    for key, value in target.state_dict().items():  # strict failure touches nothing
        assert torch.equal(value, untouched[key]), key

    report = load_foreign_weights(target, tmp_path / "w.pt", strict=False)
    assert (report.missing, report.unexpected) == (["0.bias"], ["extra.weight"])
    assert [key for key, _, _ in report.shape_mismatches] == ["2.weight", "2.bias"]
    assert report.loaded == ["0.weight"]
    assert torch.equal(target.state_dict()["0.weight"], source.state_dict()["0.weight"])
    assert torch.equal(target.state_dict()["0.bias"], untouched["0.bias"])


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("missing.pt", None, "no weights file"),
        ("w.onnx", b"x", "unknown file type"),
        ("w.safetensors", b"\x08\x00\x00\x00\x00\x00\x00\x00{bad", "not a readable safetensors"),
        ("w.pt", b"not a zip or pickle", "cannot be read safely"),
    ],
)
def test_unreadable_files_are_checkpoint_errors(
    tmp_path: Path, name: str, content: bytes | None, match: str
) -> None:
    if content is not None:
        (tmp_path / name).write_bytes(content)
    with pytest.raises(CheckpointError, match=match):
        load_foreign_weights(net(), tmp_path / name, strict=False)


def test_a_file_without_a_state_dict_is_refused(tmp_path: Path) -> None:
    torch.save([torch.zeros(1)], tmp_path / "list.pt")
    with pytest.raises(CheckpointError, match="does not hold a state_dict"):
        load_foreign_weights(net(), tmp_path / "list.pt", strict=False)
