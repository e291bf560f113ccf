"""export_module: what each failure says, the TorchScript fallback warning, --static, the manifest."""

from __future__ import annotations

import json

import pytest
import torch

from torchwise.errors import ExportError
from torchwise.export.exporter import export_module
from torchwise.export.formats import FrozenControlFlowWarning
from torchwise.export.manifest import read_manifest, sha256_of

from .models import BranchOnValue, FixedBatch, Noisy, UnscriptableBranch


def test_torchscript_fallback_warns_with_the_frozen_branch(tmp_path):
    model = UnscriptableBranch()
    with pytest.warns(FrozenControlFlowWarning) as caught:
        result = export_module(model, torch.randn(6, 4), fmt="torchscript", out=tmp_path / "m.pt")
    (warning,) = [w for w in caught if w.category is FrozenControlFlowWarning]
    message = str(warning.message)
    assert "could not script UnscriptableBranch" in message and "traced instead" in message
    assert "models.py:52: `if x.abs().max() > 100:`" in message
    assert result.manifest["warnings"] == [message]
    # The warning is true: an input that takes the other branch in eager mode does not in the trace.
    traced = torch.jit.load(str(result.path))
    big = torch.full((2, 4), 1000.0)
    with torch.inference_mode():
        torch.testing.assert_close(model(big), model.large(big))
        torch.testing.assert_close(traced(big), model.small(big))
        assert not torch.allclose(traced(big), model(big))


def test_scriptable_control_flow_is_scripted_without_a_warning(tmp_path, recwarn):
    result = export_module(BranchOnValue(), torch.randn(6, 4), fmt="torchscript", out=tmp_path / "b.pt")
    assert not [w for w in recwarn if w.category is FrozenControlFlowWarning]
    scripted = torch.jit.load(str(result.path))
    negative = -torch.rand(3, 4)
    torch.testing.assert_close(scripted(negative), scripted.negative(negative))


@pytest.mark.parametrize("fmt", ["exported", "onnx"])
def test_a_value_branch_names_its_line_and_torch_cond(tmp_path, fmt):
    if fmt == "onnx":
        pytest.importorskip("onnxscript")
    out = tmp_path / f"b.{'pt2' if fmt == 'exported' else 'onnx'}"
    with pytest.raises(ExportError) as err:
        export_module(BranchOnValue(), torch.randn(6, 4), fmt=fmt, out=out)
    where = "(models.py:31: `if x.sum() > 0:`)"
    assert f"BranchOnValue.forward branches on the value of a tensor {where}" in err.value.message
    assert "torch.cond" in err.value.hint and "--format torchscript" in err.value.hint
    assert not list(tmp_path.iterdir())  # nothing half-written is left


def test_a_fixed_batch_size_suggests_static_and_static_works(tmp_path):
    with pytest.raises(ExportError) as err:
        export_module(FixedBatch(), torch.randn(8, 4), fmt="exported", out=tmp_path / "f.pt2")
    assert err.value.message.startswith("FixedBatch fixes the batch size at 8")
    assert "--static" in err.value.hint
    result = export_module(FixedBatch(), torch.randn(8, 4), fmt="exported", out=tmp_path / "f.pt2",
                           dynamic_batch=False)
    assert result.manifest["inputs"]["tensors"] == [{"name": "input", "shape": [8, 4], "dtype": "float32",
                                                     "dynamic_dims": []}]
    assert result.verification.batch_sizes == [8]


def test_a_model_that_cannot_take_a_batch_of_one_suggests_static(tmp_path):
    with pytest.raises(ExportError) as err:
        export_module(FixedBatch(), torch.randn(8, 4), fmt="torchscript", out=tmp_path / "f.pt")
    assert err.value.message.startswith("the eager model fails on a batch of 1: RuntimeError: shape")
    assert "--static" in err.value.hint


def test_over_tolerance_is_a_failure_with_the_numbers(tmp_path):
    torch.manual_seed(0)
    with pytest.raises(ExportError) as err:
        export_module(Noisy(), torch.randn(6, 4), fmt="torchscript", out=tmp_path / "n.pt")
    message = err.value.message
    assert message.startswith("the torchscript artefact differs from the eager model on a batch of 1 of the "
                              "example inputs: max abs diff ")
    assert "(tolerance 1e-05)" in message
    abs_diff = float(message.split("max abs diff ")[1].split(",")[0])
    assert 1e-4 < abs_diff < 1e-2  # noise of scale 1e-3
    assert not (tmp_path / "n.pt").exists() and not (tmp_path / "n.json").exists()
    # A tolerance above the noise accepts it, and the manifest records the numbers.
    result = export_module(Noisy(), torch.randn(6, 4), fmt="torchscript", out=tmp_path / "n.pt", tolerance=0.1)
    assert 0 < result.verification.max_abs_diff < 0.1 and result.manifest["verification"]["tolerance"] == 0.1


def test_manifest_describes_inputs_outputs_and_the_artefact(tmp_path):
    from .models import DictInput

    inputs = {"ids": torch.randint(0, 20, (4, 6)), "mask": torch.ones(4, 6)}
    result = export_module(DictInput(), inputs, fmt="exported", out=tmp_path / "d.pt2")
    manifest = json.loads((tmp_path / "d.pt2.json").read_text())
    assert manifest == result.manifest | {"manifest_version": 1, "artefact": "d.pt2",
                                          "sha256": sha256_of(tmp_path / "d.pt2")}
    assert manifest["inputs"] == {"structure": "dict", "tensors": [
        {"name": "ids", "shape": [None, 6], "dtype": "int64", "dynamic_dims": [0]},
        {"name": "mask", "shape": [None, 6], "dtype": "float32", "dynamic_dims": [0]}]}
    assert [o["name"] for o in manifest["outputs"]] == ["logits", "pooled"]
    assert manifest["task"]["prediction"] == "logits"
    assert manifest["normalization"] is None  # no transform is defined for several inputs
    assert manifest["versions"]["torch"] == torch.__version__
    assert read_manifest(tmp_path / "d.pt2") == manifest


def test_a_changed_artefact_no_longer_matches_its_manifest(tmp_path):
    result = export_module(torch.nn.Linear(3, 2), torch.randn(4, 3), fmt="torchscript", out=tmp_path / "l.pt")
    with result.path.open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(ExportError, match="does not match the sha256 in l.pt.json"):
        read_manifest(result.path)


def test_the_callers_model_keeps_its_mode(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Dropout(0.5))
    model.train()
    export_module(model, torch.randn(4, 3), fmt="exported", out=tmp_path / "s.pt2")
    assert model.training


def test_wrong_suffix_and_unknown_format(tmp_path):
    with pytest.raises(ExportError, match=r"a onnx artefact is named \*.onnx; got m.pt2"):
        export_module(torch.nn.Linear(3, 2), torch.randn(4, 3), fmt="onnx", out=tmp_path / "m.pt2")
    with pytest.raises(ExportError, match="unknown export format 'tflite'"):
        export_module(torch.nn.Linear(3, 2), torch.randn(4, 3), fmt="tflite", out=tmp_path / "m.tflite")
