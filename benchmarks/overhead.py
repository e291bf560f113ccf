"""What torchwise costs over a hand-written loop: same model, data, seed and batch size.

Variants run interleaved in one process (round-robin, order rotated each repeat) so that
machine noise hits them alike. Each repeat times every variant twice, for 1 and for 1+E
epochs: the difference divided by E is the time of an epoch, free of start-up; what is left
of the 1-epoch time is the start-up (building the run folder, the first checkpoint's imports,
Lightning's Trainer). The table gives medians and ratios to the hand loop. Lightning and
Accelerate join when the `bench` extra is installed. Two rows read the same samples as a
stream (an IterableDataset, one sample at a time): torchwise against a hand loop over that
same stream. "hand loop (same work)" does what `fit`'s defaults do (clipping, warmup-cosine,
two parameter groups, a logged loss, a save every epoch), and "torchwise no ckpt" is the
defaults without their checkpoints. Below the table, paired ratios of whole runs (one timing
each, start-up included): the defaults against the same-work loop, with and without the
checkpoints, and the two streams.

    python benchmarks/overhead.py [--repeats 7] [--epochs 3] [--per-sample] [--only A,B] [--json PATH]
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
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

SAMPLES, FEATURES, CLASSES, BATCH = 20_000, 32, 10, 128


def make_data(*, per_sample: bool = False, samples: int = SAMPLES) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(samples, FEATURES, generator=generator)
    y = (x[:, :CLASSES] + 0.5 * torch.randn(samples, CLASSES, generator=generator)).argmax(1)
    return Samples(x, y) if per_sample else TensorDataset(x, y)


class Samples(torch.utils.data.Dataset):
    """The same tensors behind a plain Dataset: every variant then loads sample by sample, so
    the comparison isolates the training loop itself."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.x, self.y = x, y

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x[index], self.y[index]


class Stream(torch.utils.data.IterableDataset):
    """The same tensors as a stream: one seeded shuffle per pass, one sample at a time."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.x, self.y = x, y
        self.passes = 0

    def __iter__(self):
        self.passes += 1
        order = torch.randperm(len(self.y), generator=torch.Generator().manual_seed(self.passes))
        return ((self.x[i], self.y[i]) for i in order.tolist())


def as_stream(data: torch.utils.data.Dataset) -> Stream:
    x, y = data.tensors if isinstance(data, TensorDataset) else (data.x, data.y)
    return Stream(x, y)


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, CLASSES))


def hand_loop(data: TensorDataset, epochs: int, *, stream: bool = False) -> None:
    """The seeds' loop: zero_grad, forward, loss, backward, step."""
    model = make_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    if stream:
        loader = DataLoader(as_stream(data), batch_size=BATCH)
    else:
        loader = DataLoader(data, batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(0))
    for _ in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()


def careful_loop(data: torch.utils.data.Dataset, epochs: int) -> None:
    """A hand loop doing the work `torchwise.fit`'s defaults do with a dataset and no validation
    set: AdamW (fused) without weight decay on biases, warmup-cosine per step, gradient clipping
    at 1.0 with its norm read for the log, the loss logged every 10 steps, and the model,
    optimizer and schedule saved every epoch."""
    import math

    model = make_model()
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=1e-3, fused=True)
    loader = DataLoader(data, batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(0))
    total = epochs * len(loader)
    warmup = max(1, int(0.05 * total))

    def lr_factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
    log: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(epochs):
            model.train()
            for step, (x, y) in enumerate(loader):
                optimizer.zero_grad(set_to_none=True)
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                schedule.step()
                if step % 10 == 0:
                    log.append((loss.item(), norm.item()))
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "schedule": schedule.state_dict()}, Path(folder) / "last.pt")


def torchwise_fit(data: TensorDataset, epochs: int, *, minimal: bool, stream: bool = False,
                  checkpoints: bool = True) -> None:
    import torchwise

    config: dict = {"train": {"epochs": epochs, "batch_size": BATCH}, "log": {"progress": "bar"},
                    "checkpoint": {"enabled": checkpoints}}
    if minimal:
        config = {"train": {"epochs": epochs, "batch_size": BATCH, "clip_grad_norm": None},
                  "schedule": {"name": "constant"}, "checkpoint": {"enabled": False},
                  "log": {"progress": "off", "every_n_steps": 10_000}}
    with tempfile.TemporaryDirectory() as runs:
        torchwise.fit(make_model(), as_stream(data) if stream else data, config=config, runs_dir=runs)


def lightning_fit(data: TensorDataset, epochs: int) -> None:
    import lightning as L

    class Module(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = make_model()

        def training_step(self, batch, _):
            x, y = batch
            return F.cross_entropy(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-3)

    loader = DataLoader(data, batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(0))
    with tempfile.TemporaryDirectory() as root:
        trainer = L.Trainer(max_epochs=epochs, accelerator="cpu", logger=False, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False, default_root_dir=root)
        trainer.fit(Module(), loader)


def accelerate_fit(data: TensorDataset, epochs: int) -> None:
    from accelerate import Accelerator

    accelerator = Accelerator(cpu=True)
    model = make_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = DataLoader(data, batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(0))
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            accelerator.backward(loss)
            optimizer.step()


def timed(variant: Callable[[TensorDataset, int], None], data: TensorDataset, epochs: int) -> float:
    start = time.perf_counter()
    variant(data, epochs)
    return time.perf_counter() - start


def available_variants() -> dict[str, Callable[[TensorDataset, int], None]]:
    variants: dict[str, Callable[[TensorDataset, int], None]] = {
        "hand loop": hand_loop,
        "hand loop (same work)": careful_loop,
        "torchwise defaults": lambda d, e: torchwise_fit(d, e, minimal=False),
        "torchwise minimal": lambda d, e: torchwise_fit(d, e, minimal=True),
        # the defaults less their per-epoch checkpoint: what the atomic, fsynced save costs
        "torchwise no ckpt": lambda d, e: torchwise_fit(d, e, minimal=False, checkpoints=False),
        "hand loop (stream)": lambda d, e: hand_loop(d, e, stream=True),
        "torchwise (stream)": lambda d, e: torchwise_fit(d, e, minimal=True, stream=True),
    }
    try:
        import lightning  # noqa: F401

        variants["lightning"] = lightning_fit
    except ImportError:
        pass
    try:
        import accelerate  # noqa: F401

        variants["accelerate"] = accelerate_fit
    except ImportError:
        pass
    return variants


def paired_ratio(times: dict[str, list[float]], ours: str, theirs: str, label: str) -> float | None:
    """Median of the per-repeat ratios of two variants, printed with its quartiles. Paired: each
    repeat times the two close together, so a slow spell of the machine hits both; the median of
    the per-repeat ratios is steadier than a ratio of medians."""
    if ours not in times or theirs not in times:
        return None
    paired = sorted(t / h for t, h in zip(times[ours], times[theirs], strict=True))
    ratio = statistics.median(paired)
    quartiles = statistics.quantiles(paired, n=4) if len(paired) > 1 else [ratio] * 3
    print(f"{label} = {ratio:.3f}x (median of {len(paired)} paired repeats; "
          f"quartiles {quartiles[0]:.3f}-{quartiles[2]:.3f})")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--per-sample", action="store_true",
                        help="load through a plain Dataset (torchwise batches TensorDataset indexing)")
    parser.add_argument("--samples", type=int, default=SAMPLES, help="training samples per epoch")
    parser.add_argument("--only", default=None,
                        help="comma-separated variants to run (the hand loop always runs), e.g. "
                             "'hand loop (stream),torchwise (stream)'")
    args = parser.parse_args()
    suffix = "-per-sample" if args.per_sample else ""
    args.json = args.json or Path(f"benchmarks/results/overhead{suffix}.json")

    data = make_data(per_sample=args.per_sample, samples=args.samples)
    variants = available_variants()
    if args.only:
        wanted = {"hand loop", *(name.strip() for name in args.only.split(","))}
        variants = {name: run for name, run in variants.items() if name in wanted}
    names = list(variants)
    for name in names:  # warm-up: imports, allocator, first-call costs
        variants[name](data, 1)
    epoch_times: dict[str, list[float]] = {name: [] for name in names}
    startup_times: dict[str, list[float]] = {name: [] for name in names}
    run_times: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(args.repeats):
        order = names[repeat % len(names):] + names[: repeat % len(names)]
        for name in order:
            short = timed(variants[name], data, 1)
            long = timed(variants[name], data, 1 + args.epochs)
            epoch = (long - short) / args.epochs
            epoch_times[name].append(epoch)
            startup_times[name].append(short - epoch)
            run_times[name].append(long)

    hand = statistics.median(epoch_times["hand loop"])
    rows = [{"variant": name, "median_epoch_s": statistics.median(epoch_times[name]),
             "ratio": statistics.median(epoch_times[name]) / hand,
             "median_startup_s": statistics.median(startup_times[name]),
             "epoch_times_s": epoch_times[name], "run_times_s": run_times[name]} for name in names]
    machine = (f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads, "
               f"torch {torch.__version__}")
    loading = "a plain Dataset, sample by sample" if args.per_sample else "TensorDataset"
    print(f"overhead ({loading}): MLP {FEATURES}-256-256-{CLASSES}, {args.samples} samples, batch {BATCH}, AdamW; "
          f"epoch = (T(1+{args.epochs}) - T(1)) / {args.epochs}, {args.repeats} interleaved repeats; {machine}")
    print(f"{'variant':<20} {'s/epoch':>9} {'ratio':>7} {'start-up s':>11}")
    for row in rows:
        print(f"{row['variant']:<20} {row['median_epoch_s']:>9.4f} {row['ratio']:>6.3f}x "
              f"{row['median_startup_s']:>11.3f}")
    # Ratios of whole runs of 1+E epochs, start-up included: one timing each, not the difference
    # of two, so machine noise counts once.
    runs = f"{1 + args.epochs}-epoch runs"
    same_work_ratio = paired_ratio(run_times, "torchwise defaults", "hand loop (same work)",
                                   f"defaults: torchwise / a hand loop doing the same work, {runs}")
    paired_ratio(run_times, "torchwise no ckpt", "hand loop (same work)",
                 f"defaults without checkpoints / the same-work hand loop (its torch.save kept), {runs}")
    stream_ratio = paired_ratio(run_times, "torchwise (stream)", "hand loop (stream)",
                                f"stream: torchwise (minimal) / hand loop over the same stream, {runs}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": machine, "epochs": args.epochs, "repeats": args.repeats,
                                     "rows": rows, "stream_ratio": stream_ratio,
                                     "same_work_ratio": same_work_ratio}, indent=2))


if __name__ == "__main__":
    main()
