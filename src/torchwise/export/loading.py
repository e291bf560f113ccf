"""A `Predictor` from either thing ``torchwise predict`` accepts: an artefact (with its manifest)
or a run folder (its checkpoint's eager model, described the way an export would describe it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from torchwise.data.batch import call_model, to_device
from torchwise.export.manifest import Normalization, read_manifest
from torchwise.export.runtime import Artefact, torch_runner
from torchwise.export.signature import InputSignature, check_tensor, output_specs, prediction_output


@dataclass
class Predictor:
    """A model ready for batch inference, with what its manifest (or its run) says about it."""

    run: Callable[[list[torch.Tensor]], list[torch.Tensor]]  # input tensors -> output tensors
    signature: InputSignature
    output_names: list[str]
    task: dict[str, Any]
    normalization: Normalization | None
    feature_names: list[str] | None = None
    target_name: str | None = None

    def model_inputs(self, raw: Any) -> list[torch.Tensor]:
        """Raw inputs -> the model's input tensors: the run's transform for float features, float64
        (numpy's default) read as float32; anything else must already match the signature."""
        if self.signature.structure == "tensor" and isinstance(raw, torch.Tensor):
            spec = self.signature.tensors[0]
            if spec.dtype.startswith("float") and raw.dtype != torch.bool:
                check_tensor(spec, raw, any_batch=True, dtype=False)  # the shape, before the transform
                raw = self.normalization.apply(raw) if self.normalization is not None else raw.to(torch.float32)
        return self.signature.flatten(to_device(raw, "cpu", float64_to=torch.float32), any_batch=True)


def load_predictor(source: Path, *, checkpoint: str = "best", model: torch.nn.Module | None = None,
                   trust_code: bool = False, inputs: Any = None) -> Predictor:
    """An artefact file runs in its own runtime; a run folder runs its eager model (``model``:
    the module to load a Python-trained run's weights into; ``inputs``: some of the raw inputs
    that will be predicted, which show the structure a run whose data came from Python takes).
    A ``.pt2`` or TorchScript artefact this user did not export, or a run folder someone else
    wrote that names code, loads only with ``trust_code`` (either can run code)."""
    from torchwise.runs.trust import check_artefact_trust

    if source.is_dir():
        return run_predictor(source, checkpoint=checkpoint, model=model, trust_code=trust_code, inputs=inputs)
    manifest = read_manifest(source)
    check_artefact_trust(source, fmt=manifest["format"], trust_code=trust_code)
    signature = InputSignature.from_json(manifest["inputs"])
    artefact = Artefact(source, signature, fmt=manifest["format"])
    return Predictor(run=artefact.run, signature=signature, output_names=[o["name"] for o in manifest["outputs"]],
                     task=manifest["task"], normalization=Normalization.from_json(manifest["normalization"]),
                     feature_names=manifest.get("feature_names"), target_name=manifest.get("target_name"))


def run_predictor(run_dir: Path, *, checkpoint: str, model: torch.nn.Module | None = None,
                  trust_code: bool = False, inputs: Any = None) -> Predictor:
    from torchwise.export.run_info import read_run

    info = read_run(run_dir, checkpoint=checkpoint, model=model, shape_only=True, trust_code=trust_code,
                    python_inputs=inputs)
    model = info.model
    signature = InputSignature.of(info.example, dynamic_batch=True)
    with torch.inference_mode():
        outputs = output_specs(call_model(model, info.example), dynamic_batch=True)
    names = [o.name for o in outputs]
    return Predictor(run=torch_runner(model, signature), signature=signature, output_names=names,
                     task={"prediction": prediction_output(names), **info.task},
                     normalization=info.normalization, feature_names=info.describe["feature_names"],
                     target_name=info.describe["target_name"])
