"""`torchwise summary CONFIG [key=value ...]`: the configured model, layer by layer, on a real batch."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def command(
    config: Path = typer.Argument(..., help="YAML config file (see examples/)."),
    overrides: list[str] = typer.Argument(None, help="key=value overrides, e.g. model.kwargs={hidden: [64]}"),
    json_output: bool = typer.Option(False, "--json", help="Print the rows and totals as JSON."),
) -> None:
    """Build the data and the model as `train` would, push one real batch through it, and print
    per layer: type, input and output shapes, parameters and an estimate of MACs; then totals.
    On a shape error, the table up to the failing layer, that layer named, and exit 1."""
    from torch.utils.data import DataLoader

    from torchwise.config import load_config
    from torchwise.data.prepare import prepare_data
    from torchwise.diagnose.summary import render_summary, summary
    from torchwise.models import build_model

    cfg = load_config(config, overrides or [])
    data = prepare_data(cfg)
    model = build_model(cfg.model, sample_shape=data.sample_shape, out_features=data.out_features,
                        base_dir=cfg.base_dir)
    batch = next(iter(DataLoader(data.train, batch_size=cfg.train.batch_size)))
    result = summary(model, batch)
    if json_output:
        print(json.dumps(result.to_json(), indent=2))
    else:
        render_summary(result, title=f"{cfg.name or config.stem}: {type(model).__name__}")
    if result.failed_layer is not None:
        raise typer.Exit(1)
