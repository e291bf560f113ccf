"""A `Predictor` from either thing ``torchwise predict`` accepts: an artefact (with its manifest)
or a run folder (its checkpoint's eager model, described the way an export would describe it)."""

from __future__ import annotations

from pathlib import Path

from torchwise.export.manifest import Normalization, read_manifest
from torchwise.export.predict import Predictor
from torchwise.export.runtime import Artefact
from torchwise.export.signature import InputSignature


def load_predictor(source: Path, *, checkpoint: str = "best") -> Predictor:
    """An artefact file runs in its own runtime; a run folder runs its eager model."""
    manifest = read_manifest(source)
    signature = InputSignature.from_json(manifest["inputs"])
    artefact = Artefact(source, signature, fmt=manifest["format"])
    return Predictor(run=artefact.run, signature=signature, output_names=[o["name"] for o in manifest["outputs"]],
                     task=manifest["task"], normalization=Normalization.from_json(manifest["normalization"]),
                     feature_names=manifest.get("feature_names"), target_name=manifest.get("target_name"))

