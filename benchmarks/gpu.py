"""The GPU benchmark: a GPT-2-small-sized model (124M) in bf16 with torch.compile, trained through
`torchwise.fit` and through a hand-written loop on the same synthetic tokens, then the memory
estimator against `torch.cuda.max_memory_allocated` on the five models of memory_estimate.py.

Prints tokens/s for both, MFU against the GPU's peak dense bf16 FLOP/s (model FLOPs per token:
6·N for the weights plus 12·layers·width·context for attention, forward and backward), the
overhead ratio (hand loop tokens/s over fit's), and the estimator's error per model. Budgeted to
finish in under 5 minutes on one modern GPU. Without CUDA it says so and exits 0; ``--smoke``
runs a tiny GPT on the CPU instead (no compile), to check the script end to end anywhere.

    python benchmarks/gpu.py [--steps 40] [--batch 8] [--context 1024] [--smoke] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

# Dense bf16 peak FLOP/s (no sparsity), from the vendors' data sheets; the longest match wins.
PEAK_BF16 = {"H200": 989e12, "H100": 989e12, "H100 PCIe": 756e12, "A100": 312e12, "L40S": 362e12,
             "L4": 121e12, "A10G": 70e12, "A10": 125e12, "RTX 4090": 165e12, "RTX 3090": 71e12}


class Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, length, width))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class GPT(nn.Module):
    """GPT-2 small's shape: 12 layers, width 768, 12 heads, tied embeddings (124M with 50304 tokens)."""

    def __init__(self, vocab: int = 50304, context: int = 1024, width: int = 768, layers: int = 12,
                 heads: int = 12) -> None:
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(context, width)
        self.blocks = nn.Sequential(*(Block(width, heads) for _ in range(layers)))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.tokens.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1], device=ids.device))
        return self.head(self.norm(self.blocks(x)))  # [B, T, vocab]


def flops_per_token(model: GPT, context: int) -> float:
    weights = sum(p.numel() for p in model.parameters()) - model.positions.weight.numel()
    layers, width = len(model.blocks), model.norm.normalized_shape[0]
    return 6 * weights + 12 * layers * width * context


def peak_flops(device: torch.device) -> tuple[float, str]:
    if device.type != "cuda":
        return float("nan"), "cpu"
    name = torch.cuda.get_device_name(device)
    matches = [key for key in PEAK_BF16 if key in name]
    if matches:
        return PEAK_BF16[max(matches, key=len)], name
    size = 8192  # unknown GPU: what a large bf16 matmul reaches stands in for the peak
    a = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    a @ a
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(10):
        a @ a
    torch.cuda.synchronize()
    return 2 * size**3 * 10 / (time.perf_counter() - started), f"{name} (peak unknown: measured matmul)"


def tokens_dataset(samples: int, context: int, vocab: int) -> torch.utils.data.TensorDataset:
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, vocab, (samples, context + 1), generator=generator)
    return torch.utils.data.TensorDataset(ids[:, :-1].contiguous(), ids[:, 1:].contiguous())


def through_fit(make: callable, data, *, args, device: torch.device) -> float:
    """Steady tokens/s of `torchwise.fit`: the loop's own samples/s lines after the compile window."""
    import torchwise
    from torchwise.runs.folder import read_jsonl

    config = {"task": {"type": "classification", "num_classes": args.vocab},
              "optim": {"name": "adamw", "lr": 6e-4, "weight_decay": 0.1, "betas": [0.9, 0.95]},
              "schedule": {"name": "constant"}, "checkpoint": {"enabled": False},
              "log": {"progress": "off", "every_n_steps": 5},
              "train": {"precision": "fp32" if args.smoke else "bf16", "compile": not args.smoke,
                        "device": device.type, "batch_size": args.batch, "epochs": None,
                        "max_steps": args.steps, "monitor": "train_loss", "clip_grad_norm": 1.0}}
    with tempfile.TemporaryDirectory() as runs:
        result = torchwise.fit(make(), data, config=config, runs_dir=runs, quiet=True)
        lines = [r for r in read_jsonl(result.run_dir / "metrics.jsonl") if r.get("split") == "train"
                 and r.get("samples_per_second")]
    steady = [r["samples_per_second"] for r in lines[len(lines) // 2:]]  # past compile and warm-up
    return statistics.median(steady) * args.context


def hand_loop(make: callable, data, *, args, device: torch.device) -> float:
    """The same training written by hand: compile, bf16 autocast, AdamW, clipping; tokens/s."""
    model = make().to(device)
    forward = model if args.smoke else torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1, betas=(0.9, 0.95))
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch, shuffle=True, drop_last=True)
    dtype = torch.bfloat16 if not args.smoke else None
    times, clock = [], time.perf_counter()
    step = 0
    while step < args.steps:
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
                loss = F.cross_entropy(forward(x).flatten(0, 1), y.flatten())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % 5 == 0:
                loss.item()  # the seeds' loop prints the loss now and then: one sync
                now = time.perf_counter()
                times.append(5 * args.batch * args.context / (now - clock))
                clock = now
            if step >= args.steps:
                break
    return statistics.median(times[len(times) // 2:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--vocab", type=int, default=50304)
    parser.add_argument("--smoke", action="store_true", help="a tiny GPT on the CPU, no compile")
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "results" / "gpu.json")
    args = parser.parse_args()
    if not torch.cuda.is_available() and not args.smoke:
        print("no CUDA device: the GPU benchmark is skipped (--smoke checks the script on the CPU)")
        return
    started = time.perf_counter()
    device = torch.device("cpu" if args.smoke else "cuda")
    if args.smoke:
        args.context, args.vocab, args.batch, args.steps = 64, 256, 4, 20

    def make() -> GPT:
        torch.manual_seed(0)
        if args.smoke:
            return GPT(vocab=args.vocab, context=args.context, width=64, layers=2, heads=4)
        return GPT(vocab=args.vocab, context=args.context)

    data = tokens_dataset(args.batch * args.steps, args.context, args.vocab)
    per_token = flops_per_token(make(), args.context)
    peak, gpu = peak_flops(device)
    hand = hand_loop(make, data, args=args, device=device)
    fitted = through_fit(make, data, args=args, device=device)
    print(f"{gpu}: GPT {sum(p.numel() for p in make().parameters()) / 1e6:.1f}M params, batch {args.batch} x "
          f"{args.context} tokens, {'fp32 eager (smoke)' if args.smoke else 'bf16 + torch.compile'}")
    print(f"{'variant':12s} {'tokens/s':>12s} {'MFU':>7s}")
    for name, speed in (("hand loop", hand), ("torchwise", fitted)):
        print(f"{name:12s} {speed:12,.0f} {speed * per_token / peak:7.1%}")
    print(f"overhead ratio (hand / torchwise tokens/s): {hand / fitted:.3f}")
    sys.path.insert(0, str(Path(__file__).parent))
    import gc

    from memory_estimate import run as memory_rows

    torch._dynamo.reset()  # compiled GPTs and their caches leave the device before memory is measured
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()

    rows = memory_rows([8, 32] if args.smoke else [32, 128], device.type)
    worst = max(abs(r["error"]) for r in rows)
    total = time.perf_counter() - started
    print(f"memory estimator: worst error {worst:.1%} over {len(rows)} rows; total {total:.0f} s")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"gpu": gpu, "hand_tokens_per_second": hand, "fit_tokens_per_second": fitted,
                                     "flops_per_token": per_token, "peak_flops": peak,
                                     "mfu_fit": fitted * per_token / peak, "memory_rows": rows,
                                     "seconds": time.perf_counter() - started}, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
