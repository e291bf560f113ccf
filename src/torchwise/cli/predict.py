"""`torchwise predict RUN_DIR|ARTEFACT INPUT`: batch inference on a CSV, .npz, .pt or image folder."""

from __future__ import annotations

import sys
from pathlib import Path

import typer


def command(
    source: Path = typer.Argument(..., help="A run folder, or an artefact written by `torchwise export`."),
    inputs: Path = typer.Argument(..., help="A .csv (one column per feature), .npz, .pt, or a folder of images."),
    out: Path = typer.Option(None, "--out", "-o", help="Write predictions here: .csv or .json (default: stdout CSV)."),
    batch_size: int = typer.Option(256, "--batch-size", "-b", help="Samples per forward pass."),
    checkpoint: str = typer.Option("best", "--checkpoint", help="For a run folder: best or last."),
    trust_code: bool = typer.Option(False, "--trust-code",
                                    help="Import the code a run folder you did not write names."),
) -> None:
    """Predict with a run's model or an exported artefact, applying the run's input transform."""
    from torchwise.export.predict import predict

    result = predict(source, inputs, batch_size=batch_size, out=out, checkpoint=checkpoint, trust_code=trust_code)
    if out is None:
        result.write_csv(sys.stdout)
    summary = result.summary()
    lines = [f"predicted {summary['samples']} samples with {source}" + (f" -> {out}" if out else "")]
    if summary["accuracy"] is not None:
        lines.append(f"accuracy {summary['accuracy']:.4f} against the input's labels")
    lines.append(f"{summary['samples_per_second']:,.0f} samples/s; latency per batch of {summary['batch_size']}: "
                 f"p50 {summary['latency_p50_ms']:.3g} ms, p95 {summary['latency_p95_ms']:.3g} ms")
    typer.echo("\n".join(lines), err=out is None)
