"""What `torchwise predict` costs over a hand-written ``inference_mode`` loop on the same model.

A run is trained for one epoch on random 64-feature data (standardised, so the transform is
real work), exported to each available format, and then each variant predicts the same raw
inputs: the hand loop applies the run's mean/std, walks the batches under
``torch.inference_mode()`` and takes argmax and the softmax probability, which is what predict
does. Each ``predict`` row is compared with the hand loop on the same model (the eager module,
the loaded ``.pt2`` module, the TorchScript module, the onnxruntime session). Each predict row
runs right beside its hand loop, pairs rotated, in one process; the table gives the median
samples per second and the median of the paired ratios (hand-loop time / predict time).

    python benchmarks/predict.py [--repeats 7] [--samples 50000] [--batch-size 256] [--threads 1] [--json PATH]

``--threads`` sets torch's intra-op threads (1 by default: on a busy shared VM, OpenMP threads
that spin while waiting for a core make every variant 100x slower and the ratios noise).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

FEATURES, CLASSES = 64, 10


def train_run(folder: Path) -> Path:
    import torchwise

    generator = torch.Generator().manual_seed(0)
    x = torch.rand(2000, FEATURES, generator=generator) * 16
    y = (x[:, :CLASSES] + torch.randn(2000, CLASSES, generator=generator)).argmax(1)
    data = torch.utils.data.TensorDataset(x, y)
    result = torchwise.fit(make_model(), data, config={"data": {"standardize": True, "val_fraction": 0.2},
                                                "train": {"epochs": 1}, "log": {"progress": "off"}},
                           runs_dir=folder, name="bench", quiet=True)
    return result.run_dir


def make_model() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(FEATURES, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                               torch.nn.ReLU(), torch.nn.Linear(128, CLASSES))


def hand_loop(model: Callable[[torch.Tensor], torch.Tensor], mean: torch.Tensor, std: torch.Tensor,
              batch_size: int) -> Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """The seeds' inference: normalise, batches under inference_mode, then class and probability."""
    def run(raw: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = (raw - mean) / std
        with torch.inference_mode():
            logits = torch.cat([model(x[start:start + batch_size]) for start in range(0, len(x), batch_size)])
        return logits.argmax(1), torch.softmax(logits.double(), 1).max(1).values

    return run


def onnx_module(path: Path) -> Callable[[torch.Tensor], torch.Tensor]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return lambda x: torch.from_numpy(session.run(None, {name: x.numpy()})[0])


def predict_variant(source: Path, batch_size: int) -> Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """torchwise predict, loaded once (as the CLI loads once per call), on in-memory raw inputs."""
    from torchwise.export.input_files import RawInputs
    from torchwise.export.loading import load_predictor
    from torchwise.export.predict import run_batches

    predictor = load_predictor(source, model=make_model() if source.is_dir() else None)

    def run(raw: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        result = run_batches(predictor, RawInputs(inputs=raw, ids=[""] * len(raw)), batch_size=batch_size)
        return result.predictions, result.probabilities

    return run


def variants(run_dir: Path, folder: Path, batch_size: int) -> list[tuple[str, str, Callable]]:
    """(name, the hand loop it is compared with, callable) for every format this machine has."""
    import torchwise

    stats = json.loads((run_dir / "data_stats.json").read_text())
    mean, std = torch.tensor(stats["mean"]), torch.tensor(stats["std"])
    eager = torchwise.load_model(run_dir, make_model())
    example = (torch.rand(256, FEATURES, generator=torch.Generator().manual_seed(2)) * 16 - mean) / std
    rows = [("hand loop, eager", "hand loop, eager", hand_loop(eager, mean, std, batch_size)),
            ("predict RUN_DIR", "hand loop, eager", predict_variant(run_dir, batch_size))]
    formats = ["exported", "torchscript"]
    try:
        import onnxruntime  # noqa: F401
        import onnxscript  # noqa: F401

        formats.append("onnx")
    except ImportError:
        pass
    for fmt in formats:
        # The run's data came from Python (fit): the model and a batch of inputs come from here too.
        artefact = torchwise.export_run(run_dir, fmt=fmt, out=folder, model=make_model(), example_inputs=example).path
        if fmt == "exported":
            module: Callable = torch.export.load(artefact).module()
        elif fmt == "torchscript":
            module = torch.jit.load(str(artefact))
        else:
            module = onnx_module(artefact)
        hand = f"hand loop, {artefact.name}"
        rows += [(hand, hand, hand_loop(module, mean, std, batch_size)),
                 (f"predict {artefact.name}", hand, predict_variant(artefact, batch_size))]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--samples", type=int, default=50_000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/predict.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = variants(train_run(folder), folder / "export", args.batch_size)
        raw = torch.rand(args.samples, FEATURES, generator=torch.Generator().manual_seed(1)) * 16
        reference = None
        for _, _, run in rows:  # warm-up, and every variant must give the same classes
            classes, _ = run(raw)
            reference = classes if reference is None else reference
            assert (classes == reference).double().mean() > 0.999
        times: dict[str, list[float]] = {name: [] for name, _, _ in rows}
        runs = {name: run for name, _, run in rows}
        pairs = [(base, name) for name, base, _ in rows if name != base]
        for repeat in range(args.repeats):
            # Each predict row runs right beside its hand loop (which goes first alternates), so
            # that the machine's drift hits both; the pairs' order rotates.
            for base, name in pairs[repeat % len(pairs):] + pairs[:repeat % len(pairs)]:
                for variant in ((base, name) if repeat % 2 else (name, base)):
                    start = time.perf_counter()
                    runs[variant](raw)
                    times[variant].append(time.perf_counter() - start)

    speed = {name: args.samples / statistics.median(samples) for name, samples in times.items() if samples}
    table = []
    for name, base, _ in rows:
        paired = [b / n for b, n in zip(times[base], times[name], strict=True)] \
            if name != base else [1.0]
        table.append({"variant": name, "compared_with": base, "samples_per_second": speed[name],
                      "ratio": statistics.median(paired), "seconds": times[name]})
    machine = (f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads, "
               f"torch {torch.__version__}")
    print(f"predict: MLP {FEATURES}-256-128-{CLASSES}, {args.samples} raw samples, batch {args.batch_size}, "
          f"{args.repeats} interleaved repeats; {machine}")
    print(f"{'variant':<28} {'samples/s':>11} {'ratio':>7}  vs")
    for row in table:
        print(f"{row['variant']:<28} {row['samples_per_second']:>11,.0f} {row['ratio']:>6.3f}x  {row['compared_with']}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": machine, "samples": args.samples, "batch_size": args.batch_size,
                                     "repeats": args.repeats, "rows": table}, indent=2))


if __name__ == "__main__":
    main()
