"""Writing an artefact in each format: torch.export (``.pt2``), TorchScript (``.pt``), ONNX (``.onnx``).

Each writer takes an eval-mode model on the CPU, one real example batch of inputs and its
`InputSignature`, and returns the notes worth telling the user (a TorchScript trace's frozen
branches). A failure becomes an `ExportError` that says why in the user's terms: the line of
``forward`` that branches on a tensor's value, or the batch size the model fixed.

>>> import torch, tempfile, pathlib
>>> model = torch.nn.Linear(3, 2).eval()
>>> x = torch.randn(4, 3)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "model.pt2"
>>> write_artefact(model, x, InputSignature.of(x, dynamic_batch=True), fmt="exported", path=path)
[]
>>> torch.export.load(path).module()(torch.randn(1, 3)).shape
torch.Size([1, 2])
"""

from __future__ import annotations

import contextlib
import io
import linecache
import logging
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from torchwise.errors import ExportError
from torchwise.export.signature import InputSignature, output_specs

FORMATS: dict[str, str] = {"exported": ".pt2", "torchscript": ".pt", "onnx": ".onnx"}


class FrozenControlFlowWarning(UserWarning):
    """A TorchScript trace turned a Python branch on a tensor's value into a constant."""


def write_artefact(model: torch.nn.Module, example: Any, signature: InputSignature, *, fmt: str,
                   path: Path) -> list[str]:
    """Export ``model`` called on ``example`` to ``path`` in ``fmt``; returns warnings to show."""
    if fmt == "exported":
        torch.export.save(export_program(model, example, signature), path)
        return []
    if fmt == "torchscript":
        scripted, notes = torchscript(model, example, signature)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit is what this format is
            torch.jit.save(scripted, str(path))
        return notes
    if fmt == "onnx":
        write_onnx(model, example, signature, path=path)
        return []
    raise ExportError(f"unknown export format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")


def export_program(model: torch.nn.Module, example: Any, signature: InputSignature) -> Any:
    """torch.export's ExportedProgram, the batch dim dynamic where the signature says so."""
    args, kwargs = signature.export_args(example)
    try:
        # torch.export prints the partial graph on stdout when it fails: keep the user's terminal clean.
        with _quiet():
            return torch.export.export(model, args, kwargs, dynamic_shapes=signature.dynamic_shapes(),
                                       strict=False)
    except Exception as err:  # torch.export raises many types; every one is explained below
        raise explain_export_failure(err, model, signature) from err


def explain_export_failure(err: Exception, model: torch.nn.Module, signature: InputSignature) -> ExportError:
    """The cause of a torch.export failure in words: a fixed batch size or a data-dependent branch."""
    text = str(err)
    first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    where = user_line(err, model)
    if "Constraints violated" in text or "specialized it to be a constant" in text:
        size = signature_batch_hint(text)
        return ExportError(f"{type(model).__name__} fixes the batch size{size}{where}, so it cannot be exported "
                           "with a dynamic batch dimension",
                           hint="export with --static (the artefact then takes batches of exactly that size), "
                                "or let forward() take any batch: x.view(x.size(0), -1) instead of x.view(64, -1)")
    if "data-dependent" in text or "GuardOnDataDependent" in type(err).__name__:
        return ExportError(f"{type(model).__name__}.forward branches on the value of a tensor{where}, "
                           "which torch.export cannot capture",
                           hint="write the branch with torch.cond(pred, true_fn, false_fn, (x,)) or torch.where, "
                                "or export with --format torchscript (scripting keeps Python control flow)")
    return ExportError(f"torch.export could not export {type(model).__name__}{where}: {first}",
                       hint="--format torchscript may handle it; rerun with --debug for torch's full message")


def signature_batch_hint(text: str) -> str:
    marker = "specialized it to be a constant ("
    if marker in text:
        return " at " + text.split(marker, 1)[1].split(")", 1)[0]
    return ""


def user_line(err: BaseException, model: torch.nn.Module) -> str:
    """`` (file.py:12: `code`)`` for the deepest frame of the model's own code in a traceback."""
    source = _module_file(model)
    frames = [f for f in traceback.extract_tb(err.__traceback__) if source and f.filename == source]
    if not frames:
        return ""
    frame = frames[-1]
    return f" ({Path(frame.filename).name}:{frame.lineno}: `{(frame.line or '').strip()}`)"


def _module_file(model: torch.nn.Module) -> str | None:
    import inspect

    try:
        return inspect.getsourcefile(type(model))
    except (TypeError, OSError):
        return None


def torchscript(model: torch.nn.Module, example: Any, signature: InputSignature) -> tuple[Any, list[str]]:
    """Script the model (control flow kept); where scripting fails, trace it and say which Python
    branches on tensor values the trace froze (the tracer's own warnings name their lines)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit is what this format is
            return torch.jit.script(model), []
    except Exception as err:  # TorchScript's frontend raises several types for unsupported Python
        reason = f"{type(err).__name__}: {str(err).strip().splitlines()[0].rstrip(':')}"
    args, kwargs = signature.export_args(example)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if kwargs:
                traced = torch.jit.trace(model, example_kwarg_inputs=kwargs, strict=False, check_trace=False)
            else:
                traced = torch.jit.trace(model, args, strict=False, check_trace=False)
        except Exception as err:  # neither scripting nor tracing works: name both reasons
            raise ExportError(f"TorchScript can neither script {type(model).__name__} ({reason}) nor trace it "
                              f"({type(err).__name__}: {str(err).strip().splitlines()[0]})",
                              hint="use --format exported or --format onnx") from err
    frozen = sorted({(w.filename, w.lineno) for w in caught
                     if w.category is torch.jit.TracerWarning and "might cause the trace to be incorrect"
                     in str(w.message)})
    places = [f"{Path(file).name}:{line}: `{linecache.getline(file, line).strip()}`" for file, line in frozen]
    note = (f"TorchScript could not script {type(model).__name__} ({reason}); it was traced instead. ")
    if places:
        note += ("The trace froze the Python control flow on tensor values at " + "; ".join(places)
                 + ": every input takes the branch the example took. Inputs that would take another branch get "
                   "wrong results. Use --format exported, or make forward() scriptable.")
    else:
        note += "The tracer reported no Python branch on tensor values."
    return traced, [note]


def write_onnx(model: torch.nn.Module, example: Any, signature: InputSignature, *, path: Path) -> None:
    """ONNX through the dynamo-based exporter, from the same ExportedProgram as ``--format exported``
    (so its failures read the same); inputs and outputs keep the signature's names."""
    try:
        import onnx  # noqa: F401  (the exporter needs it; name the extra before torch does)
        import onnxscript  # noqa: F401
    except ImportError:
        raise ExportError("ONNX export needs the onnx and onnxscript packages",
                          hint="pip install 'torchwise[onnx]'") from None
    program = export_program(model, example, signature)
    args, kwargs = signature.export_args(example)
    with torch.inference_mode():
        outputs = output_specs(model(*args, **kwargs), dynamic_batch=False)
    with _quiet():
        onnx_program = torch.onnx.export(program, args, kwargs=kwargs, dynamo=True, verbose=False,
                                         input_names=signature.names, output_names=[o.name for o in outputs])
    onnx_program.save(str(path))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the exporters' progress lines, warnings and log records (their errors still raise)."""
    logger = logging.getLogger("torch")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)
