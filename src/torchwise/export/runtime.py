"""Running an artefact the way a deployment would: torch.export.load, torch.jit.load, onnxruntime.

Verification and ``torchwise predict`` both call an artefact through `Artefact.run`, which takes
the input tensors in signature order and returns the output tensors in output order, so that
the three formats look alike to them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from torchwise.data.batch import call_model, tensors
from torchwise.errors import ExportError
from torchwise.export.formats import FORMATS
from torchwise.export.signature import InputSignature


def format_of(path: Path) -> str:
    """The format an artefact's file name says it is in."""
    for fmt, suffix in FORMATS.items():
        if path.name.endswith(suffix):
            return fmt
    raise ExportError(f"{path} is not an artefact torchwise knows by its name",
                      hint=f"artefacts end in {', '.join(FORMATS.values())}, with their <name>.json manifest beside")


class Artefact:
    """A loaded artefact; ``run`` maps input tensors to output tensors."""

    def __init__(self, path: Path, signature: InputSignature, *, fmt: str | None = None) -> None:
        self.path = path
        self.format = fmt or format_of(path)
        self.signature = signature
        self._run = _loader(self.format)(path, signature)

    def run(self, flat_inputs: list[torch.Tensor]) -> list[torch.Tensor]:
        return self._run(flat_inputs)


def _loader(fmt: str) -> Callable[[Path, InputSignature], Callable[[list[torch.Tensor]], list[torch.Tensor]]]:
    return {"exported": _exported, "torchscript": _torchscript, "onnx": _onnx}[fmt]


def _exported(path: Path, signature: InputSignature) -> Callable[[list[torch.Tensor]], list[torch.Tensor]]:
    module = torch.export.load(path).module()
    return torch_runner(module, signature)


def _torchscript(path: Path, signature: InputSignature) -> Callable[[list[torch.Tensor]], list[torch.Tensor]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit is what this format is
        module = torch.jit.load(str(path), map_location="cpu")
    module.eval()
    return torch_runner(module, signature)


def torch_runner(module: Any, signature: InputSignature) -> Callable[[list[torch.Tensor]], list[torch.Tensor]]:
    """Input tensors -> output tensors of a torch module (eager, exported or TorchScript); the
    caller holds ``torch.inference_mode()`` around the whole loop (entering it per batch costs)."""
    def run(flat: list[torch.Tensor]) -> list[torch.Tensor]:
        return tensors(call_model(module, signature.rebuild(flat)))

    return run


def _onnx(path: Path, signature: InputSignature) -> Callable[[list[torch.Tensor]], list[torch.Tensor]]:
    try:
        import onnxruntime
    except ImportError:
        raise ExportError("running an ONNX artefact needs onnxruntime",
                          hint="pip install 'torchwise[onnx]'") from None
    options = onnxruntime.SessionOptions()
    # As many threads as torch uses here, so that torch.set_num_threads (and OMP_NUM_THREADS)
    # govern both runtimes alike.
    options.intra_op_num_threads = torch.get_num_threads()
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = signature.names

    def run(flat: list[torch.Tensor]) -> list[torch.Tensor]:
        feeds = {name: t.detach().cpu().numpy() for name, t in zip(names, flat, strict=True)}
        return [torch.from_numpy(out) for out in session.run(None, feeds)]

    return run
