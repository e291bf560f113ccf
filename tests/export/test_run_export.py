"""Export and predict from a run folder: the run's transform, data, classes and provenance."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from torchwise.errors import ExportError
from torchwise.export.exporter import export_run
from torchwise.export.predict import predict

from .conftest import raw_digits_val_csv

SUFFIX = {"exported": ".pt2", "torchscript": ".pt", "onnx": ".onnx"}


def same_accuracy(result, reported: float, total: int) -> None:
    """Exactly the run's figure: the same count of correct samples, so the same float32 value the
    loop reported (it computes accuracy in float32)."""
    correct = int((result.predictions == result.labels).sum())
    assert len(result.predictions) == total
    assert correct == round(reported * total)
    assert torch.tensor(result.accuracy, dtype=torch.float32).item() == reported


@pytest.mark.parametrize("source", ["run", "exported", "torchscript", "onnx"])
def test_predict_on_raw_digits_reproduces_the_val_accuracy(digits_run, tmp_path, source):
    if source == "onnx":
        pytest.importorskip("onnxruntime")
    summary = json.loads((digits_run / "summary.json").read_text())
    csv_path = raw_digits_val_csv(tmp_path / "digits_val.csv")
    target = digits_run
    if source != "run":
        target = export_run(digits_run, fmt=source, out=tmp_path / f"model{SUFFIX[source]}").path
    result = predict(target, csv_path, batch_size=50)
    same_accuracy(result, summary["best"]["value"], 359)


def test_the_last_checkpoint_reproduces_the_final_accuracy(digits_run, tmp_path):
    summary = json.loads((digits_run / "summary.json").read_text())
    csv_path = raw_digits_val_csv(tmp_path / "digits_val.csv")
    artefact = export_run(digits_run, fmt="exported", checkpoint="last").path
    assert artefact == digits_run / "export" / "model-last.pt2"
    same_accuracy(predict(artefact, csv_path), summary["final"]["val_accuracy"], 359)
    same_accuracy(predict(digits_run, csv_path, checkpoint="last"), summary["final"]["val_accuracy"], 359)


def test_the_manifest_of_a_run(digits_run, tmp_path):
    result = export_run(digits_run, fmt="torchscript", out=tmp_path)
    assert result.path == tmp_path / "model.pt"
    manifest = json.loads((tmp_path / "model.pt.json").read_text())
    stats = json.loads((digits_run / "data_stats.json").read_text())
    meta = json.loads((digits_run / "checkpoints/best/meta.json").read_text())
    assert manifest["normalization"] == {"scale": 0.0625, "mean": stats["mean"], "std": stats["std"]}
    assert manifest["task"] == {"type": "classification", "prediction": "output",
                                "classes": [str(i) for i in range(10)]}
    assert manifest["feature_names"][:2] == ["pixel_0_0", "pixel_0_1"] and len(manifest["feature_names"]) == 64
    assert manifest["target_name"] == "target"
    assert manifest["inputs"]["tensors"] == [{"name": "input", "shape": [None, 64], "dtype": "float32",
                                              "dynamic_dims": [0]}]
    assert manifest["verification"]["batch_sizes"] == [1, 64]
    assert manifest["verification"]["data"] == "the validation data of digits"
    source = manifest["source"]
    assert (source["run_name"], source["checkpoint"], source["step"]) == ("digits", "best", meta["step"])
    assert source["config_hash"] == meta["config_hash"]


def test_a_run_trained_from_python_with_dict_inputs(tmp_path):
    """fit() with a Dataset of ({"ids", "mask"}, label): the model and a batch come from the caller."""
    import torchwise

    from .models import DictInput

    class Tokens(torch.utils.data.Dataset):
        def __init__(self, n: int) -> None:
            generator = torch.Generator().manual_seed(0)
            self.ids = torch.randint(0, 20, (n, 6), generator=generator)
            self.labels = self.ids[:, 0] % 3

        def __len__(self) -> int:
            return len(self.labels)

        def __getitem__(self, i: int):
            return {"ids": self.ids[i], "mask": torch.ones(6)}, self.labels[i]

    torch.manual_seed(0)
    run = torchwise.fit(DictInput(), Tokens(64), Tokens(16), config={"train": {"epochs": 1}}, runs_dir=tmp_path,
                        quiet=True).run_dir
    batch = {"ids": torch.randint(0, 20, (8, 6)), "mask": torch.ones(8, 6)}
    with pytest.raises(ExportError) as err:
        export_run(run, model=DictInput())
    assert "came from Python (torchwise.fit)" in err.value.message
    assert "example_inputs=" in err.value.hint
    result = export_run(run, model=DictInput(), example_inputs=batch, fmt="exported")
    assert result.manifest["inputs"]["structure"] == "dict"
    assert result.manifest["task"]["prediction"] == "logits"
    reloaded = torchwise.load_model(run, DictInput())
    with torch.inference_mode():
        want = reloaded(**batch)["logits"]
    torch.testing.assert_close(torch.export.load(result.path).module()(**batch)["logits"], want)
    # Predicting from the run folder itself: the inputs in memory show the structure the model takes.
    assert torch.equal(predict(run, batch, model=DictInput()).predictions, want.argmax(1))
    np.savez(tmp_path / "batch.npz", **{k: v.numpy() for k, v in batch.items()})
    with pytest.raises(ExportError) as err:  # a file cannot say it: before, a raw error from the model
        predict(run, tmp_path / "batch.npz", model=DictInput())
    assert "to learn the structure of its model's inputs" in err.value.message
    assert err.value.hint == ("predict from Python with the inputs in memory: "
                              f"torchwise.predict('{run}', inputs, model=...)")


def tiny_net_run(tmp_path):
    """A run whose model is a user class, in a file beside its config."""
    from torchwise.config import load_config
    from torchwise.train.run import run_training

    code = tmp_path / "code"
    code.mkdir()
    (code / "my_net.py").write_text(
        "import torch\n\n\nclass TinyNet(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.head = torch.nn.Linear(64, 10)\n\n"
        "    def forward(self, x):\n        return self.head(x)\n")
    (code / "config.yaml").write_text("data: {source: digits}\nmodel: {target: my_net:TinyNet}\n"
                                      "train: {epochs: 1}\nlog: {progress: 'off'}\n")
    return code, run_training(load_config(code / "config.yaml"), runs_dir=tmp_path / "runs", name="tiny").run_dir


def test_a_model_class_that_cannot_be_imported_names_class_module_and_folder(tmp_path):
    code, run = tiny_net_run(tmp_path)
    (code / "my_net.py").rename(code / "moved.py")
    # A fresh process, as a user exporting later would have (this one has my_net imported).
    done = subprocess.run([sys.executable, "-m", "torchwise", "export", str(run)], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    error, hint = done.stderr.strip().splitlines()
    assert error.startswith("error: the run's model TinyNet cannot be imported: cannot import module 'my_net'")
    assert hint == (f"hint: put the folder that holds module 'my_net' (the run found it in {code}) on "
                    "PYTHONPATH, or run torchwise from that folder")


def test_predictions_csv_of_a_run(digits_run, tmp_path):
    csv_path = raw_digits_val_csv(tmp_path / "digits_val.csv")
    result = predict(digits_run, csv_path, out=tmp_path / "predictions.csv")
    rows = list(csv.DictReader((tmp_path / "predictions.csv").open()))
    assert len(rows) == 359 and list(rows[0]) == ["id", "prediction", "probability"]
    assert [int(r["prediction"]) for r in rows] == result.predictions.tolist()


def test_a_run_folder_someone_else_wrote_passes_the_trust_gate_first(tmp_path):
    """Export and predict import the code a run names only for a folder this user wrote (signed),
    or with --trust-code (issue 15's gate, `torchwise.runs.trust`)."""
    code, run = tiny_net_run(tmp_path)
    (run / "signature.json").unlink()  # as if it came from someone else
    done = subprocess.run([sys.executable, "-m", "torchwise", "export", str(run)], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"error: {run} is not a run you wrote" in done.stderr and "imports my_net" in done.stderr
    assert not (run / "export").exists()
    csv_path = raw_digits_val_csv(tmp_path / "val.csv")
    done = subprocess.run([sys.executable, "-m", "torchwise", "predict", str(run), str(csv_path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2 and f"error: {run} is not a run you wrote" in done.stderr
    done = subprocess.run([sys.executable, "-m", "torchwise", "export", str(run), "--trust-code"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (run / "export" / "model.pt2").is_file()
