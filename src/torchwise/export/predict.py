"""Batch inference from a run folder or an artefact: ``torchwise predict`` and ``torchwise.predict``.

The raw inputs go through the run's whole transform (the manifest's ``normalization``), then
through the model in batches under ``torch.inference_mode()`` (an artefact's own runtime for
ONNX), and come out as class indices with their probability, or as regression values. The
timing covers inference only: samples per second over the whole input, and the latency of one
batch at the 50th and 95th percentile.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from torchwise.data.batch import slice_batch
from torchwise.errors import DataError
from torchwise.export.input_files import RawInputs, read_inputs
from torchwise.export.loading import Predictor, load_predictor

DEFAULT_BATCH_SIZE = 256


@dataclass
class Predictions:
    """What `predict` returns: per-sample predictions and the speed they were made at."""

    ids: list[str]
    outputs: torch.Tensor  # the prediction output, one row per sample
    task: dict[str, Any]
    labels: torch.Tensor | None
    seconds: float
    latencies: list[float]
    batch_size: int

    @property
    def classification(self) -> bool:
        return self.task.get("type") == "classification"

    @property
    def multilabel(self) -> bool:
        return self.task.get("type") == "multilabel"

    @property
    def class_dim(self) -> int:
        """Where the classes are: -1 for [B, C] and [B, T, C] (sequences), 1 for [B, C, d1, ...]."""
        return self.task.get("class_dim", -1)

    @property
    def predictions(self) -> torch.Tensor:
        """Class indices (one per sample, or per position and pixel), 0/1 per label (multilabel: a
        logit above 0, as training's metrics count it), or the outputs themselves."""
        if self.multilabel:
            return (self.outputs > 0).long()
        return self.outputs.argmax(self.class_dim) if self.classification else self.outputs

    @property
    def probabilities(self) -> torch.Tensor | None:
        """The softmax probability of the predicted class; multilabel: each label's sigmoid."""
        if self.multilabel:
            return torch.sigmoid(self.outputs.double())
        if not self.classification:
            return None
        return torch.softmax(self.outputs.double(), dim=self.class_dim).amax(self.class_dim)

    @property
    def accuracy(self) -> float | None:
        """Share of correct predictions (of positions, for sequences and pixels; the target value
        training skipped is skipped; multilabel: samples with every label right), when the input
        carried labels shaped as the predictions."""
        if self.labels is None or self.labels.shape != self.predictions.shape:
            return None
        if self.multilabel:
            return (self.predictions == (self.labels > 0.5)).flatten(1).all(1).double().mean().item()
        if not self.classification:
            return None
        labels = self.labels.long()
        counted = labels != self.task.get("ignore_index", -100)
        if not counted.any():
            return None
        return (self.predictions == labels)[counted].double().mean().item()

    @property
    def samples_per_second(self) -> float:
        return len(self.ids) / self.seconds if self.seconds else math.inf

    def latency_ms(self, percentile: float) -> float:
        ordered = sorted(self.latencies)
        index = min(len(ordered) - 1, max(0, math.ceil(percentile / 100 * len(ordered)) - 1))
        return ordered[index] * 1000

    def rows(self) -> list[dict[str, Any]]:
        """One record per sample: ``prediction`` and ``probability`` (classification, the class name
        where the run knows it; nested lists for a class per position or pixel; multilabel: the
        labels predicted, and every label's probability), or one value per regression output."""
        classes = [as_number(c) for c in self.task["classes"]] if self.task.get("classes") else None
        ids = [as_number(i) for i in self.ids]  # a row number is a number in JSON, a file name stays text
        if self.multilabel:
            return [{"id": i, "prediction": [classes[j] if classes else j for j, yes in enumerate(p) if yes],
                     "probability": [round(q, 6) for q in qs]}
                    for i, p, qs in zip(ids, self.predictions.tolist(), self.probabilities.tolist(), strict=True)]
        if self.classification:

            def name(p: Any) -> Any:
                if isinstance(p, list):
                    return [name(q) for q in p]
                return classes[p] if classes else p

            def rounded(q: Any) -> Any:
                return [rounded(r) for r in q] if isinstance(q, list) else round(q, 6)

            return [{"id": i, "prediction": name(p), "probability": rounded(q)}
                    for i, p, q in zip(ids, self.predictions.tolist(), self.probabilities.tolist(), strict=True)]
        columns = self.task.get("targets") or [f"output_{j}" for j in range(self.outputs[0].numel())]
        values = self.outputs.reshape(len(self.ids), -1).tolist()
        return [{"id": i, **dict(zip(columns, row, strict=True))} for i, row in zip(ids, values, strict=True)]

    def write(self, path: Path) -> None:
        """``.json``: a list of records; anything else: CSV with a header."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".json":
            path.write_text(json.dumps(self.rows(), indent=1) + "\n")
            return
        with path.open("w", newline="") as handle:
            self.write_csv(handle)

    def write_csv(self, handle: Any) -> None:
        """The rows as CSV with a header; a prediction per position goes in one cell, space-separated
        (a sequence), or as JSON (a grid of pixels)."""
        import csv

        def cell(value: Any) -> Any:
            if not isinstance(value, list):
                return value
            if any(isinstance(item, list) for item in value):
                return json.dumps(value)
            return " ".join(str(item) for item in value)

        rows = [{key: cell(value) for key, value in row.items()} for row in self.rows()]
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["id", "prediction"])
        writer.writeheader()
        writer.writerows(rows)

    def summary(self) -> dict[str, Any]:
        return {"samples": len(self.ids), "samples_per_second": round(self.samples_per_second, 1),
                "latency_p50_ms": round(self.latency_ms(50), 3), "latency_p95_ms": round(self.latency_ms(95), 3),
                "batch_size": self.batch_size, "accuracy": self.accuracy}


def predict(source: str | Path, inputs: Any, *, batch_size: int = DEFAULT_BATCH_SIZE, out: str | Path | None = None,
            checkpoint: str = "best", model: torch.nn.Module | None = None, trust_code: bool = False) -> Predictions:
    """Predict with a run folder's model (``checkpoint`` best or last) or an exported artefact.

    ``inputs`` is a file (.csv, .npz, .pt) or an image folder, or raw inputs already in memory (a
    tensor or numpy array of raw features, or a dict of them). With ``out``, the predictions are
    written there (CSV, or JSON for ``.json``). A run trained from Python needs ``model``, built
    as for fit (its weights are loaded into it). A ``.pt2`` or TorchScript artefact you did not
    export, or a run folder someone else wrote that names code, loads only with
    ``trust_code=True``: loading one can run code it carries.
    """
    if batch_size < 1:
        raise DataError(f"batch size {batch_size} is not a size", hint="--batch-size 256, or any N >= 1")
    in_memory = None if isinstance(inputs, (str, Path)) else _in_memory(inputs)
    shown = slice_batch(in_memory.inputs, 0, 2) if in_memory is not None else None
    predictor = load_predictor(Path(source), checkpoint=checkpoint, model=model, trust_code=trust_code,
                               inputs=shown)
    if in_memory is None:
        raw = read_inputs(Path(inputs), predictor.signature, feature_names=predictor.feature_names,
                          target_name=predictor.target_name, classes=predictor.task.get("classes"))
    else:
        raw = in_memory
    result = run_batches(predictor, raw, batch_size=batch_size)
    if out is not None:
        result.write(Path(out))
    return result


def run_batches(predictor: Predictor, raw: RawInputs, *, batch_size: int) -> Predictions:
    """The model over the inputs in batches of ``batch_size`` (the exported size for a static
    artefact, with the last batch padded), timing each batch."""
    flat = predictor.model_inputs(raw.inputs)
    static = predictor.signature.tensors[0].shape[0]
    step = static or batch_size
    index = predictor.output_names.index(predictor.task.get("prediction") or predictor.output_names[0])
    with torch.inference_mode():
        pieces, latencies, seconds = _timed_batches(predictor, flat, step=step, static=static, index=index)
    outputs = torch.cat(pieces) if pieces else torch.empty(0)
    return Predictions(ids=raw.ids, outputs=outputs, task=predictor.task, labels=raw.labels, seconds=seconds,
                       latencies=latencies or [0.0], batch_size=step)


def _timed_batches(predictor: Predictor, flat: list[torch.Tensor], *, step: int, static: int | None,
                   index: int) -> tuple[list[torch.Tensor], list[float], float]:
    total = len(flat[0])
    pieces, latencies = [], []
    if total:  # one sample first, untimed: the first call of a runtime pays its one-off set-up
        predictor.run([t[:1].expand(static or 1, *t.shape[1:]) for t in flat])
    started = time.perf_counter()
    for start in range(0, total, step):
        chunk = [t[start:start + step] for t in flat]
        real = len(chunk[0])
        if static and real < static:  # a fixed-size artefact: pad with copies of the last row
            chunk = [torch.cat([t, t[-1:].expand(static - real, *t.shape[1:])]) for t in chunk]
        began = time.perf_counter()
        output = predictor.run(chunk)[index]
        latencies.append(time.perf_counter() - began)
        pieces.append(output[:real])
    return pieces, latencies, time.perf_counter() - started


def _in_memory(inputs: Any) -> RawInputs:
    def tensor(value: Any) -> torch.Tensor:
        return value if isinstance(value, torch.Tensor) else torch.as_tensor(value)

    if isinstance(inputs, dict):
        converted: Any = {k: tensor(v) for k, v in inputs.items()}
        count = len(next(iter(converted.values())))
    elif isinstance(inputs, (tuple, list)) and inputs and not isinstance(inputs[0], (int, float)):
        converted = tuple(tensor(v) for v in inputs)
        count = len(converted[0])
    else:
        converted = tensor(inputs)
        count = len(converted)
    return RawInputs(inputs=converted, ids=[str(i) for i in range(count)])


def as_number(value: Any) -> Any:
    """``"3"`` -> ``3``: row numbers and class labels that are integers (read back from text).

    >>> [as_number(v) for v in ("3", "-1", "007", "cat", 4)]
    [3, -1, '007', 'cat', 4]
    """
    if isinstance(value, str) and value.lstrip("-").isdigit() and str(int(value)) == value:  # not "007"
        return int(value)
    return value
