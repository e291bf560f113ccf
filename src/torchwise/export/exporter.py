"""Export a model to a verified artefact with its manifest: `export_module` (any nn.Module and a
batch of its inputs) and `export_run` (the model of a run folder, checked on the run's own data).

The order is the one a careful engineer follows by hand: ``eval()`` on the CPU, export at a
batch of at least two (a batch of one lets torch.export fix the batch size at 1), load the
artefact back the way a deployment would, compare it with the eager model on a batch of one
and on the larger batch, and only then move the file to its name and write the manifest.

>>> import torch, tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "linear.pt2"
>>> result = export_module(torch.nn.Linear(3, 2), torch.randn(8, 3), fmt="exported", out=out)
>>> result.path.name, result.manifest["inputs"]["tensors"][0]["shape"], result.verification.batch_sizes
('linear.pt2', [None, 3], [1, 8])
"""

from __future__ import annotations

import contextlib
import copy
import os
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from torchwise.data.batch import call_model, count_samples, map_tensors, slice_batch
from torchwise.errors import ExportError
from torchwise.export.formats import FORMATS, FrozenControlFlowWarning, write_artefact
from torchwise.export.manifest import Normalization, versions, write_manifest
from torchwise.export.runtime import Artefact
from torchwise.export.signature import InputSignature, output_specs, prediction_output
from torchwise.export.verify import Verification, verify
from torchwise.runs.trust import sign_artefact

DEFAULT_TOLERANCE = 1e-5


@dataclass
class ExportResult:
    """Where the artefact and its manifest are, and what the verification measured."""

    path: Path
    manifest_path: Path
    manifest: dict[str, Any]
    verification: Verification
    warnings: list[str] = field(default_factory=list)


def export_module(model: torch.nn.Module, example_inputs: Any, *, fmt: str = "exported", out: str | Path,
                  dynamic_batch: bool = True, tolerance: float = DEFAULT_TOLERANCE,
                  normalization: Normalization | None = None, task: dict[str, Any] | None = None,
                  describe: dict[str, Any] | None = None, data: str = "the example inputs") -> ExportResult:
    """Export ``model`` called on ``example_inputs`` (a tensor, tuple or dict of tensors: one batch,
    ideally of real data) to ``out`` in ``fmt`` (exported, torchscript, onnx), verify it and write
    the manifest. ``normalization``, ``task`` and ``describe`` (extra manifest fields) say what a
    user of the artefact needs to know; `export_run` fills them from the run."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
    out = Path(out)
    if not out.name.endswith(FORMATS[fmt]):
        raise ExportError(f"a {fmt} artefact is named *{FORMATS[fmt]}; got {out.name}",
                          hint=f"--out {out.with_suffix(FORMATS[fmt])}")
    example = map_tensors(example_inputs, lambda t: t.detach().cpu())
    if dynamic_batch and count_samples(example) < 2:
        # Exported at a batch of one, torch.export would fix the batch size at 1.
        example = map_tensors(example, lambda t: torch.cat([t, t]) if t.dim() else t)
    signature = InputSignature.of(example, dynamic_batch=dynamic_batch)
    batches = [slice_batch(example, 0, 1), example] if dynamic_batch else [example]
    out.parent.mkdir(parents=True, exist_ok=True)
    # The artefact takes its name only once it has passed verification; the staging name is
    # mkstemp's (unpredictable, created by us), so nothing planted there is written through.
    handle, staging_name = tempfile.mkstemp(prefix=f".{out.stem}.", suffix=f".tmp{FORMATS[fmt]}", dir=out.parent)
    os.close(handle)
    staging = Path(staging_name)
    with eval_on_cpu(model) as eager:
        try:
            notes = write_artefact(eager, example, signature, fmt=fmt, path=staging)
            check = verify(eager, Artefact(staging, signature, fmt=fmt), batches, tolerance=tolerance, data=data)
            with torch.inference_mode():
                outputs = output_specs(call_model(eager, example), dynamic_batch=dynamic_batch)
            os.replace(staging, out)
        finally:
            staging.unlink(missing_ok=True)
    for note in notes:
        warnings.warn(note, FrozenControlFlowWarning, stacklevel=2)
    # An identity transform for one float input; token ids and other integers take none.
    single_float = signature.structure == "tensor" and signature.tensors[0].dtype.startswith("float")
    sample_shape = tuple(signature.tensors[0].shape[1:]) if single_float else None
    if normalization is None and sample_shape is not None and all(s is not None for s in sample_shape):
        normalization = Normalization.identity(sample_shape)  # type: ignore[arg-type]
    manifest = {
        "format": fmt,
        "dynamic_batch": dynamic_batch,
        "inputs": signature.to_json(),
        "outputs": [o.to_json() for o in outputs],
        "task": {"type": None, "prediction": prediction_output([o.name for o in outputs]), **(task or {})},
        "normalization": normalization.to_json() if normalization is not None else None,
        **(describe or {}),
        "verification": check.to_json(),
        "versions": versions(fmt),
        "warnings": notes,
        "load": LOAD_HINTS[fmt].format(name=out.name),
    }
    written = write_manifest(out, manifest)
    sign_artefact(out)  # made by this user: predict loads it without asking (runs/trust.py)
    return ExportResult(path=out, manifest_path=written, manifest=manifest, verification=check, warnings=notes)


LOAD_HINTS = {
    "exported": "torch.export.load('{name}').module()(x)",
    "torchscript": "torch.jit.load('{name}')(x)",
    "onnx": "onnxruntime.InferenceSession('{name}').run(None, {{input_name: x}})",
}


@contextlib.contextmanager
def eval_on_cpu(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """The model in eval mode on the CPU; the caller's model is left as it was (a copy when it
    lives on another device, its train/eval mode restored otherwise)."""
    on_cpu = all(p.device.type == "cpu" for p in [*model.parameters(), *model.buffers()])
    eager = model if on_cpu else copy.deepcopy(model).cpu()
    was_training = eager.training
    eager.eval()
    try:
        yield eager
    finally:
        eager.train(was_training)


def export_run(run_dir: str | Path, *, fmt: str = "exported", checkpoint: str = "best", dynamic_batch: bool = True,
               out: str | Path | None = None, tolerance: float = DEFAULT_TOLERANCE,
               model: torch.nn.Module | None = None, example_inputs: Any = None,
               trust_code: bool = False) -> ExportResult:
    """Export the model of a run folder (its ``best`` or ``last`` checkpoint), verified on the run's
    own validation data; the manifest carries the run's transform, class names and provenance.

    ``out`` defaults to ``RUN_DIR/export/model.<ext>`` (``model-last.<ext>`` for the last
    checkpoint); a folder there (or a path without a suffix) gets that name inside it. A run trained from Python
    (`torchwise.fit`) needs ``model`` (built as for fit; the weights are loaded into it) and
    ``example_inputs`` (a batch of real inputs, when its data came from Python too).
    ``trust_code=True`` accepts the code named by a run folder this user did not write.
    """
    from torchwise.export.run_info import read_run
    from torchwise.runs.safe_io import check_folder

    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
    run_dir = Path(run_dir)
    name = f"model{'' if checkpoint == 'best' else '-' + checkpoint}{FORMATS[fmt]}"
    target = Path(out) if out is not None else check_folder(run_dir / "export")  # not a planted link
    if out is None or target.is_dir() or not target.suffix:  # a folder: the default name inside it
        target = target / name
    info = read_run(run_dir, checkpoint=checkpoint, model=model, example_inputs=example_inputs,
                    trust_code=trust_code)
    return export_module(info.model, info.example, fmt=fmt, out=target, dynamic_batch=dynamic_batch,
                         tolerance=tolerance, normalization=info.normalization, task=info.task,
                         describe=info.describe, data=info.data)
