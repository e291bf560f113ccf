"""predict from an artefact: raw inputs through the manifest's transform, every input kind, bad input."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import torch

from torchwise.errors import DataError
from torchwise.export.exporter import export_module
from torchwise.export.manifest import Normalization
from torchwise.export.predict import predict
from torchwise.models.builtin import mlp

from .models import DictInput

NORM = Normalization(scale=0.5, mean=[1.0, 0.0, -1.0], std=[2.0, 1.0, 4.0])


@pytest.fixture(scope="module")
def artefact(tmp_path_factory):
    """A 3-feature, 4-class classifier exported with a known transform and names."""
    torch.manual_seed(0)
    model = mlp(3, 4, hidden=[8]).eval()
    folder = tmp_path_factory.mktemp("predict")
    raw = torch.randn(32, 3) * 4
    result = export_module(model, NORM.apply(raw), fmt="torchscript", out=folder / "model.pt",
                           normalization=NORM, task={"type": "classification", "classes": ["a", "b", "c", "d"]},
                           describe={"feature_names": ["f0", "f1", "f2"], "target_name": "label"})
    return model, result.path, raw


def write_csv(path, header, rows):
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        if header:
            writer.writerow(header)
        writer.writerows(rows)


def expected(model, raw):
    with torch.inference_mode():
        return model(NORM.apply(raw))


def test_csv_by_name_applies_the_transform_and_reports_accuracy(artefact, tmp_path):
    model, path, raw = artefact
    logits = expected(model, raw)
    labels = logits.argmax(1).tolist()
    labels[0] = (labels[0] + 1) % 4  # one wrong label: accuracy 31/32
    # Columns in another order, an extra column: taken by name.
    write_csv(tmp_path / "in.csv", ["f2", "id", "label", "f0", "f1"],
              [[r[2], "x", y, r[0], r[1]] for r, y in zip(raw.tolist(), labels, strict=True)])
    result = predict(path, tmp_path / "in.csv", batch_size=5, out=tmp_path / "out.csv")
    assert torch.equal(result.predictions, logits.argmax(1))
    assert result.accuracy == 31 / 32
    rows = list(csv.DictReader((tmp_path / "out.csv").open()))
    assert list(rows[0]) == ["id", "prediction", "probability"]
    assert [r["prediction"] for r in rows] == [["a", "b", "c", "d"][i] for i in logits.argmax(1).tolist()]
    probability = torch.softmax(logits.double(), 1).max(1).values
    assert [float(r["probability"]) for r in rows] == pytest.approx(probability.tolist(), abs=1e-6)
    assert len(result.latencies) == 7 and result.batch_size == 5  # ceil(32 / 5) timed batches
    summary = result.summary()
    assert summary["samples"] == 32 and summary["latency_p95_ms"] >= summary["latency_p50_ms"] > 0


def test_text_labels_are_read_through_the_class_names(artefact, tmp_path):
    model, path, raw = artefact
    names = [["a", "b", "c", "d"][i] for i in expected(model, raw).argmax(1).tolist()]
    write_csv(tmp_path / "in.csv", ["f0", "f1", "f2", "label"], [[*r, n] for r, n in zip(raw.tolist(), names,
                                                                                      strict=True)])
    assert predict(path, tmp_path / "in.csv").accuracy == 1.0
    names[0] = "not a class"
    write_csv(tmp_path / "in.csv", ["f0", "f1", "f2", "label"], [[*r, n] for r, n in zip(raw.tolist(), names,
                                                                                      strict=True)])
    assert predict(path, tmp_path / "in.csv").accuracy is None


def test_csv_without_header_is_positional(artefact, tmp_path):
    model, path, raw = artefact
    write_csv(tmp_path / "in.csv", None, raw.tolist())
    result = predict(path, tmp_path / "in.csv")
    assert torch.equal(result.predictions, expected(model, raw).argmax(1)) and result.accuracy is None


def test_wrong_feature_count_names_what_the_model_expects(artefact, tmp_path):
    _, path, raw = artefact
    write_csv(tmp_path / "in.csv", ["f0", "f1"], raw[:, :2].tolist())
    with pytest.raises(DataError) as err:
        predict(path, tmp_path / "in.csv")
    assert err.value.message == f"{tmp_path / 'in.csv'} has 2 columns; the model expects 3 features (f0, f1, f2)"
    assert "header row naming the feature columns" in err.value.hint
    with pytest.raises(DataError) as err:
        predict(path, raw[:, :2])
    assert err.value.message == "the model expects input: float32 [batch, 3]; the input has 2 features"


def test_npz_pt_and_json_output(artefact, tmp_path):
    model, path, raw = artefact
    want = expected(model, raw).argmax(1)
    np.savez(tmp_path / "in.npz", x=raw.double().numpy(), y=want.numpy())
    torch.save({"x": raw}, tmp_path / "in.pt")
    from_npz = predict(path, tmp_path / "in.npz", out=tmp_path / "p.json")
    assert torch.equal(from_npz.predictions, want) and from_npz.accuracy == 1.0
    records = json.loads((tmp_path / "p.json").read_text())
    assert records[0] == {"id": 0, "prediction": "abcd"[int(want[0])],  # a row number is a number
                          "probability": pytest.approx(from_npz.probabilities[0].item(), abs=1e-6)}
    assert torch.equal(predict(path, tmp_path / "in.pt").predictions, want)
    assert torch.equal(predict(path, raw.numpy()).predictions, want)


def test_dict_inputs_by_name_and_a_wrong_dtype(tmp_path):
    torch.manual_seed(0)
    model = DictInput().eval()
    inputs = {"ids": torch.randint(0, 20, (10, 6)), "mask": torch.ones(10, 6)}
    result = export_module(model, inputs, fmt="exported", out=tmp_path / "d.pt2")
    torch.save(inputs, tmp_path / "in.pt")
    with torch.inference_mode():
        want = model(**inputs)["logits"]
    got = predict(result.path, tmp_path / "in.pt", batch_size=3)
    torch.testing.assert_close(got.outputs, want)
    assert got.task["type"] is None and torch.equal(got.predictions, got.outputs)  # no task: the outputs
    torch.save({"ids": inputs["ids"].float(), "mask": inputs["mask"]}, tmp_path / "bad.pt")
    with pytest.raises(DataError) as err:
        predict(result.path, tmp_path / "bad.pt")
    assert err.value.message == "the model expects ids: int64 [batch, 6]; the input has dtype float32"
    assert err.value.hint == "give ids as int64 with shape [N, 6]"
    torch.save({"ids": inputs["ids"]}, tmp_path / "missing.pt")
    with pytest.raises(DataError, match=r"has no array named 'mask'; it holds \['ids'\]"):
        predict(result.path, tmp_path / "missing.pt")


def test_an_image_folder(tmp_path):
    from PIL import Image

    torch.manual_seed(0)
    model = mlp(16, 3, hidden=[8]).eval()
    pixels = torch.randint(0, 256, (5, 4, 4), dtype=torch.uint8)
    folder = tmp_path / "images"
    folder.mkdir()
    for i, image in enumerate(pixels):
        Image.fromarray(image.numpy(), mode="L").save(folder / f"img{4 - i}.png")  # names sort in reverse
    norm = Normalization(scale=1 / 255, mean=[0.5] * 16, std=[0.25] * 16)
    result = export_module(model, norm.apply(pixels.flatten(1).float()), fmt="exported", out=tmp_path / "m.pt2",
                           normalization=norm, task={"type": "classification", "classes": None})
    got = predict(result.path, folder)
    assert got.ids == [f"img{i}.png" for i in range(5)]
    with torch.inference_mode():
        want = model(norm.apply(pixels.flatten(1).flip(0))).argmax(1)
    assert torch.equal(got.predictions, want)


def test_a_static_artefact_pads_the_last_batch(tmp_path):
    torch.manual_seed(0)
    model = mlp(3, 2, hidden=[4]).eval()
    result = export_module(model, torch.randn(8, 3), fmt="exported", out=tmp_path / "s.pt2", dynamic_batch=False)
    raw = torch.randn(19, 3)
    got = predict(result.path, raw, batch_size=100)
    assert got.batch_size == 8 and len(got.latencies) == 3 and len(got.outputs) == 19
    with torch.inference_mode():
        torch.testing.assert_close(got.outputs, model(raw))


def test_regression_writes_one_column_per_output(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 2).eval()
    result = export_module(model, torch.randn(4, 2), fmt="onnx" if _has_onnx() else "exported",
                           out=tmp_path / ("r.onnx" if _has_onnx() else "r.pt2"),
                           task={"type": "regression", "targets": None})
    got = predict(result.path, torch.randn(3, 2), out=tmp_path / "r.csv")
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert list(rows[0]) == ["id", "output_0", "output_1"]
    assert float(rows[2]["output_1"]) == pytest.approx(got.outputs[2, 1].item())


def _has_onnx() -> bool:
    try:
        import onnxruntime  # noqa: F401
        import onnxscript  # noqa: F401
    except ImportError:
        return False
    return True


def test_predict_keeps_up_with_a_hand_written_loop(tmp_path):
    """A one-process ratio with a wide margin (benchmarks/predict.py measures it properly): the
    batches, timing and bookkeeping of predict cost little next to the model itself."""
    import time

    from torchwise.export.input_files import RawInputs
    from torchwise.export.loading import load_predictor
    from torchwise.export.predict import run_batches

    torch.manual_seed(0)
    model = mlp(64, 10, hidden=[256, 128]).eval()
    result = export_module(model, torch.randn(8, 64), fmt="exported", out=tmp_path / "m.pt2")
    predictor = load_predictor(result.path)
    module = torch.export.load(result.path).module()
    raw = torch.randn(20_000, 64)

    def hand() -> tuple[torch.Tensor, torch.Tensor]:
        with torch.inference_mode():
            logits = torch.cat([module(raw[i:i + 256]) for i in range(0, len(raw), 256)])
        return logits.argmax(1), torch.softmax(logits.double(), 1).max(1).values

    def ours() -> tuple[torch.Tensor, torch.Tensor]:
        got = run_batches(predictor, RawInputs(inputs=raw, ids=[""] * len(raw)), batch_size=256)
        return got.predictions, got.probabilities

    best = {hand: float("inf"), ours: float("inf")}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # on a busy machine, spinning OpenMP threads swamp what is measured
    try:
        for _ in range(5):
            for run in (hand, ours):
                started = time.perf_counter()
                run()
                best[run] = min(best[run], time.perf_counter() - started)
    finally:
        torch.set_num_threads(threads)
    assert best[hand] / best[ours] > 0.5
