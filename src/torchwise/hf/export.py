"""`torchwise export RUN --format hf`: the run's model as ``save_pretrained`` output (weights,
config.json, and the run's tokenizer), which ``AutoModel...from_pretrained`` loads without
torchwise. A LoRA model is merged into its base weights first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchwise.errors import ExportError


def export_hf(run_dir: str | Path, *, checkpoint: str = "best", out: str | Path | None = None,
              model: Any = None, tokenizer: Any = None, trust_code: bool = False) -> Path:
    """Write ``save_pretrained`` output of ``run_dir``'s model to ``out`` (default:
    ``RUN_DIR/export/hf`` or ``hf-last``); returns the folder. The tokenizer is the run's
    ``data.tokenizer`` folder unless one is passed."""
    from torchwise.checkpoints.load import load_model
    from torchwise.runs.trust import open_run_config

    run_dir = Path(run_dir)
    model = load_model(run_dir, model, which=checkpoint, trust_code=trust_code)  # type: ignore[arg-type]
    if hasattr(model, "merge_and_unload"):  # peft: the adapters folded into the base weights
        model = model.merge_and_unload()
    if not callable(getattr(model, "save_pretrained", None)):
        raise ExportError(f"--format hf writes save_pretrained output; {type(model).__name__} is not a "
                          "transformers model", hint="use --format exported, torchscript or onnx")
    default = "hf" if checkpoint == "best" else f"hf-{checkpoint}"
    target = Path(out) if out is not None else run_dir / "export" / default
    if tokenizer is None:
        cfg = open_run_config(run_dir, trust_code=trust_code, sections=("data",))
        if cfg.data.tokenizer is not None:
            from torchwise.hf.data import load_tokenizer

            tokenizer = load_tokenizer(cfg.resolve_path(cfg.data.tokenizer))
    staging = target.with_name(f".{target.name}.partial")
    _remove(staging)
    model.save_pretrained(str(staging), safe_serialization=True)
    if tokenizer is not None:
        tokenizer.save_pretrained(str(staging))
    _remove(target)
    staging.rename(target)  # never a half-written folder under the final name
    return target


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
