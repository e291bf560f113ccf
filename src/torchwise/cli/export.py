"""`torchwise export RUN_DIR --format exported|torchscript|onnx|hf`: a verified artefact and its
manifest, or (``hf``) a transformers model's save_pretrained folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from torchwise.export.exporter import ExportResult


def command(
    run_dir: Path = typer.Argument(..., help="The run folder (runs/<name>)."),
    fmt: str = typer.Option("exported", "--format", "-f",
                            help="exported (torch.export, .pt2), torchscript (.pt), onnx (.onnx), or hf "
                                 "(save_pretrained folder of a transformers model, with its tokenizer)."),
    checkpoint: str = typer.Option("best", "--checkpoint", help="Which checkpoint: best or last."),
    dynamic_batch: bool = typer.Option(True, "--dynamic-batch/--static",
                                       help="Any batch size (default), or only the size it was exported at."),
    out: Path = typer.Option(None, "--out", "-o",
                             help="Artefact path or folder (default: RUN_DIR/export/model.<ext>)."),
    tolerance: float = typer.Option(1e-5, "--tolerance", help="Largest difference from the eager model allowed."),
    trust_code: bool = typer.Option(False, "--trust-code",
                                    help="Import the code a run folder you did not write names."),
) -> None:
    """Export a run's model, check it against the eager model on the run's data, write a manifest."""
    import warnings

    from torchwise.export.exporter import export_run

    if fmt == "hf":
        from torchwise.hf.export import export_hf

        folder = export_hf(run_dir, checkpoint=checkpoint, out=out, trust_code=trust_code)
        typer.echo(f"exported {folder} (save_pretrained: load it with transformers' from_pretrained)")
        return

    with warnings.catch_warnings():
        # The result's own warnings are printed below, once, in plain words; torch's are noise here.
        warnings.simplefilter("ignore")
        result = export_run(run_dir, fmt=fmt, checkpoint=checkpoint, dynamic_batch=dynamic_batch, out=out,
                            tolerance=tolerance, trust_code=trust_code)
    for note in result.warnings:
        typer.echo(f"warning: {note}", err=True)
    print_export(result)


def print_export(result: ExportResult) -> None:
    from torchwise.export.signature import TensorSpec

    manifest = result.manifest
    check = result.verification
    size = result.path.stat().st_size
    task = manifest["task"]
    meaning = ""
    if task.get("type") == "multilabel":
        width = manifest["outputs"][0]["shape"][-1]
        meaning = f" (a yes/no logit for each of {width} labels)"
    elif task.get("classes"):
        classes = task["classes"]
        meaning = f" (logits of {len(classes)} classes: {', '.join(classes[:3])}{', ...' if len(classes) > 3 else ''})"
    elif task.get("type") == "regression":
        meaning = f" (regression: {', '.join(task.get('targets') or ['values'])})"
    sizes = " and ".join(str(s) for s in check.batch_sizes)
    lines = [
        f"exported {result.path} ({manifest['format']}, {size / 1e6:.2f} MB)",
        f"  inputs     {', '.join(TensorSpec.from_json(t).describe() for t in manifest['inputs']['tensors'])}",
        f"  outputs    {', '.join(TensorSpec.from_json(t).describe() for t in manifest['outputs'])}{meaning}",
        f"  verified   batches of {sizes} from {check.data}: max abs diff {check.max_abs_diff:.3g}, "
        f"max rel diff {check.max_rel_diff:.3g} (tolerance {check.tolerance:g})",
    ]
    norm = manifest.get("normalization")
    if norm is not None:
        lines.append(f"  transform  (raw * {norm['scale']:g} - mean) / std, per feature (manifest: normalization)")
    lines.append(f"  manifest   {result.manifest_path}")
    typer.echo("\n".join(lines))
