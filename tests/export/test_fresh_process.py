"""Done means: each model, exported to each format, loads in a fresh Python process that never
imports torchwise (torch.export.load, torch.jit.load, onnxruntime) and matches the eager model on
inputs it has not seen, batch sizes other than the export's included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from torchwise.export.exporter import export_module
from torchwise.models.builtin import SmallCNN, mlp

from .models import BranchOnValue, BranchWithCond, DictInput

pytest.importorskip("onnxruntime")

FORMATS = {"exported": ".pt2", "torchscript": ".pt", "onnx": ".onnx"}


def _ids(n: int, seed: int) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    mask = (torch.rand(n, 6, generator=generator) > 0.3).float()
    return {"ids": torch.randint(0, 20, (n, 6), generator=generator), "mask": mask}


def _x(n: int, features: int, seed: int) -> torch.Tensor:
    return torch.randn(n, features, generator=torch.Generator().manual_seed(seed))


def cases() -> dict[str, tuple]:
    """name -> (model per format, example batch, fresh input batches)."""
    torch.manual_seed(0)
    branch_x = _x(8, 4, 1)
    return {
        "mlp": (mlp(64, 10, hidden=[32, 16]), _x(16, 64, 1), [_x(3, 64, 2), _x(37, 64, 3)]),
        "linear": (torch.nn.Linear(5, 2), _x(16, 5, 1), [_x(1, 5, 2), _x(9, 5, 3)]),
        "small-cnn": (SmallCNN((1, 8, 8), 10, width=8), _x(16, 64, 1), [_x(2, 64, 2), _x(11, 64, 3)]),
        "dict-input": (DictInput(), _ids(16, 1), [_ids(3, 2), _ids(7, 3)]),
        # Both branches on fresh inputs: a batch whose sum is positive, and one whose sum is negative.
        "data-dependent": ({"torchscript": BranchOnValue(), "other": BranchWithCond()}, branch_x,
                           [_x(5, 4, 2).abs(), -_x(6, 4, 3).abs()]),
    }


def model_for(model, fmt: str) -> torch.nn.Module:
    if isinstance(model, dict):
        return model["torchscript"] if fmt == "torchscript" else model["other"]
    return model


def named(inputs) -> dict[str, torch.Tensor]:
    return {"input": inputs} if isinstance(inputs, torch.Tensor) else dict(inputs)


# The dict-input case runs in the fast suite; the whole matrix (15 exports, about 2 minutes on a
# busy 2-core machine) is `slow`.
FAST = ("dict-input",)


@pytest.fixture(scope="module")
def matrix(tmp_path_factory) -> dict[tuple[str, str], tuple[list, list]]:
    """Export the cases to every format, run all artefacts in one fresh process, and return
    (artefact outputs, eager outputs) per (case, format)."""
    return build_matrix(tmp_path_factory.mktemp("fresh"), FAST)


@pytest.fixture(scope="module")
def slow_matrix(tmp_path_factory) -> dict[tuple[str, str], tuple[list, list]]:
    return build_matrix(tmp_path_factory.mktemp("fresh-slow"), [n for n in cases() if n not in FAST])


def build_matrix(folder: Path, names) -> dict[tuple[str, str], tuple[list, list]]:
    jobs, expected = [], {}
    for name, (models, example, fresh) in cases().items():
        if name not in names:
            continue
        shared = {"torchscript": models["torchscript"], "other": models["other"]} if isinstance(models, dict) else None
        if shared:  # the same weights in both spellings of the branch
            shared["other"].load_state_dict(shared["torchscript"].state_dict())
        for fmt, suffix in FORMATS.items():
            model = model_for(models, fmt).eval()
            artefact = folder / f"{name}-{fmt}{suffix}"
            result = export_module(model, example, fmt=fmt, out=artefact)
            assert result.verification.batch_sizes == [1, 16 if name != "data-dependent" else 8]
            eager = []
            for i, inputs in enumerate(fresh):
                input_file, output_file = folder / f"{name}-{fmt}-{i}.in.pt", folder / f"{name}-{fmt}-{i}.out.pt"
                torch.save(named(inputs), input_file)
                jobs.append({"artefact": str(artefact), "manifest": str(result.manifest_path), "format": fmt,
                             "inputs": str(input_file), "outputs": str(output_file)})
                with torch.inference_mode():
                    out = model(**inputs) if isinstance(inputs, dict) else model(inputs)
                eager.append(list(out.values()) if isinstance(out, dict) else [out])
            expected[(name, fmt)] = (eager, [folder / f"{name}-{fmt}-{i}.out.pt" for i in range(len(fresh))])
    jobs_file = folder / "jobs.json"
    jobs_file.write_text(json.dumps(jobs))
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("fresh_process.py")), str(jobs_file)],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "2"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"torchwise_modules": []}
    return {key: ([torch.load(p, weights_only=True) for p in paths], eager)
            for key, (eager, paths) in expected.items()}


def assert_matches(got: list, eager: list) -> None:
    for got_batch, eager_batch in zip(got, eager, strict=True):
        assert len(got_batch) == len(eager_batch)
        for g, e in zip(got_batch, eager_batch, strict=True):
            torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("name", FAST)
def test_artefact_in_a_fresh_process_matches_eager(matrix, name, fmt):
    assert_matches(*matrix[(name, fmt)])


@pytest.mark.slow
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("name", [n for n in cases() if n not in FAST])
def test_every_model_in_a_fresh_process_matches_eager(slow_matrix, name, fmt):
    assert_matches(*slow_matrix[(name, fmt)])


@pytest.mark.slow
def test_the_fresh_inputs_take_both_branches(slow_matrix):
    """The data-dependent case tests control flow only if its two batches take different layers:
    the artefacts' outputs match the positive layer on one and the negative layer on the other."""
    first, second = cases()["data-dependent"][2]
    assert first.sum() > 0 > second.sum()
    models = cases()["data-dependent"][0]
    model = models["torchscript"]
    for fmt in FORMATS:
        got, _ = slow_matrix[("data-dependent", fmt)]
        with torch.inference_mode():
            torch.testing.assert_close(got[0][0], model.positive(first), rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(got[1][0], model.negative(second), rtol=1e-5, atol=1e-5)
