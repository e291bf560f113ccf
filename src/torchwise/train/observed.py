"""The data facts of a training set that is not a `TensorDataset`, from the batches the first epoch
trained on (its first 65,536 targets and 8,192 input rows at most): what `run_facts` reads from the
tensors when it has them (class counts, the target's moments, binary targets' rates, the inputs'
scale), so that `diagnose` has the same baselines for a custom `Dataset` (a recommender's (user,
item) pairs, windows cut from a series) or a stream.

Each micro-batch is seen on the host, before it moves to the device: sums and counts in float64,
no extra read of the dataset and no device sync. The facts are merged into ``facts.json`` once,
at the end of the first epoch or when the run stops before it, with ``observed_samples``::

    {"observed_samples": 4096, "target": {"mean": 3.5, "variance": 1.9, ...}}
"""

from __future__ import annotations

import math
from typing import Any

import torch

from torchwise.data.batch import split_batch
from torchwise.train.run_facts import binary_summary, scale_summary

# Enough rows for a class prior, a target's moments and each feature's scale: past these, seeing a
# batch costs host time on the loop's thread (an ImageNet-sized batch of 64 takes ~70 ms to square
# and sum in float64 on one CPU core) and changes no verdict. facts.json says how many were seen.
LABEL_SAMPLES = 65_536
INPUT_ROWS = 8_192


class ObservedData:
    """Running sums over the first epoch's training batches (a small class: it holds state)."""

    def __init__(self, *, task: str, base: dict[str, Any], ignore_index: int = -100) -> None:
        self.task, self.base, self.ignore_index = task, base, ignore_index  # base: what run_facts wrote
        self.samples, self.input_rows = 0, 0
        self.counts: torch.Tensor | None = None  # class labels
        self.target: dict[str, Any] | None = None  # float targets: n, sum, sumsq per output, min, max, binary
        self.inputs: torch.Tensor | None = None  # per-feature sum of squares of a float input tensor
        self.broken: set[str] = set()  # what changed shape between batches: not a fact
        self.done = False

    def add(self, batch: Any) -> None:
        inputs, target = split_batch(batch)
        if isinstance(target, torch.Tensor) and target.dim() >= 1 and len(target) and self.samples < LABEL_SAMPLES:
            self.samples += len(target)
            if target.is_floating_point():
                self._add_float(target)
            elif self.task == "classification":
                labels = target.flatten()
                labels = labels[(labels >= 0) & (labels != self.ignore_index)]
                counts = torch.bincount(labels).double()
                if self.counts is not None and len(self.counts) > len(counts):
                    counts = torch.nn.functional.pad(counts, (0, len(self.counts) - len(counts)))
                elif self.counts is not None:
                    self.counts = torch.nn.functional.pad(self.counts, (0, len(counts) - len(self.counts)))
                self.counts = counts if self.counts is None else self.counts + counts
        if (isinstance(inputs, torch.Tensor) and inputs.is_floating_point() and inputs.dim() >= 2 and len(inputs)
                and self.input_rows < INPUT_ROWS):
            squares = inputs.reshape(len(inputs), -1).double().pow(2).sum(0)
            if self.inputs is not None and self.inputs.shape != squares.shape:
                self.broken.add("inputs")
            elif "inputs" not in self.broken:
                self.inputs = squares if self.inputs is None else self.inputs + squares
                self.input_rows += len(inputs)

    def _add_float(self, target: torch.Tensor) -> None:
        flat = target.reshape(len(target), -1).double()
        if self.target is not None and self.target["sum"].shape != flat.shape[1:]:
            self.broken.add("target")
        if "target" in self.broken:
            return
        binary = bool(((flat == 0) | (flat == 1)).all())
        part = {"n": len(flat), "sum": flat.sum(0), "sumsq": flat.pow(2).sum(0), "min": float(flat.min()),
                "max": float(flat.max()), "binary": binary}
        if self.target is None:
            self.target = part
            return
        t = self.target
        t.update(n=t["n"] + part["n"], sum=t["sum"] + part["sum"], sumsq=t["sumsq"] + part["sumsq"],
                 min=min(t["min"], part["min"]), max=max(t["max"], part["max"]), binary=t["binary"] and binary)

    def facts(self) -> dict[str, Any]:
        """The keys `run_facts` writes for a TensorDataset, from what was seen."""
        found: dict[str, Any] = {"observed_samples": self.samples}
        if self.counts is not None and self.counts.sum() > 0:
            found["class_counts"] = [int(c) for c in self.counts.tolist()]
        if self.target is not None and "target" not in self.broken and self.target["n"]:
            t, n = self.target, self.target["n"]
            mean = t["sum"] / n
            variance = (t["sumsq"] / n - mean.pow(2)).clamp(min=0)
            overall = float(t["sum"].sum() / (n * len(mean)))
            pooled = max(float(t["sumsq"].sum() / (n * len(mean))) - overall**2, 0.0)
            if self.task == "regression":
                found["target"] = {"mean": overall, "variance": pooled, "min": t["min"], "max": t["max"],
                                   "outputs": len(mean), "output_variance": float(f"{float(variance.mean()):.6g}")}
            if t["binary"]:
                found["binary_targets"] = binary_summary(mean)
        if self.inputs is not None and "inputs" not in self.broken and self.input_rows:
            found["inputs"] = scale_summary((self.inputs / self.input_rows).sqrt())
        return {k: v for k, v in found.items() if not (isinstance(v, float) and not math.isfinite(v))}

    def write(self, run: Any) -> None:
        """Merge what was seen into facts.json (once: at the first epoch's end or when the run stops)."""
        if not self.done and (self.samples or self.input_rows):  # a resume past epoch 0 saw nothing
            self.done = True
            run.write_json("facts.json", {**self.base, **self.facts()})
