"""Check `diagnose`'s thresholds on runs the tests do not use: the digits set, other models.

The tests plant pathologies in small synthetic runs; this script trains digits runs (1,797 8x8
images, scikit-learn) with MLPs of other shapes and prints the code each gets, so the
thresholds are seen to hold beyond the runs they were first tried on.

    python benchmarks/diagnose_check.py            # writes benchmarks/results/diagnose_check.json
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import TensorDataset

import torchwise
from torchwise.diagnose.run_diagnosis import diagnose_run


def digits() -> tuple[TensorDataset, TensorDataset]:
    data = load_digits()
    x = torch.tensor(data.data, dtype=torch.float32)
    x = (x - x.mean(0)) / (x.std(0) + 1e-6)
    y = torch.tensor(data.target)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))
    return TensorDataset(x[order[:1400]], y[order[:1400]]), TensorDataset(x[order[1400:]], y[order[1400:]])


def mlp(*sizes: int, act: type[nn.Module] = nn.ReLU) -> nn.Sequential:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        layers += [nn.Linear(a, b), act()]
    return nn.Sequential(*layers[:-1])


# A too-high LR shows either as oscillation/a blow-up (lr_too_high) or as a loss that ends higher
# than it began (diverging): the issue counts both as the right answer.
TOO_HIGH = "lr_too_high|diverging"


def cases(train: TensorDataset, val: TensorDataset) -> list[tuple[str, str, nn.Module, TensorDataset, dict]]:
    small = TensorDataset(*train[:100])
    return [
        ("healthy", "healthy", mlp(64, 128, 10), train, {}),
        ("healthy, SGD lr=2 (bouncy but fine)", "healthy", mlp(64, 128, 10), train,
         {"optim": {"name": "sgd", "lr": 2.0, "momentum": 0.0}, "schedule": {"name": "constant"},
          "train": {"clip_grad_norm": None, "epochs": 5}}),
        ("healthy, SGD momentum 0.99", "healthy", mlp(64, 128, 10), train,
         {"optim": {"name": "sgd", "lr": 0.05, "momentum": 0.99}, "train": {"clip_grad_norm": None}}),
        ("AdamW lr=0.5, warmup-cosine", TOO_HIGH, mlp(64, 128, 10), train,
         {"optim": {"lr": 0.5}, "train": {"clip_grad_norm": None}}),
        ("AdamW lr=0.1, constant", TOO_HIGH, mlp(64, 128, 10), train,
         {"optim": {"lr": 0.1}, "schedule": {"name": "constant"}, "train": {"clip_grad_norm": None, "epochs": 5}}),
        ("AdamW lr=1e-6", "lr_too_low", mlp(64, 128, 10), train, {"optim": {"lr": 1e-6}}),
        ("100 samples, 512x512, no decay", "overfitting", mlp(64, 512, 512, 10), small,
         {"optim": {"weight_decay": 0.0}, "train": {"epochs": 60, "batch_size": 20}}),
        ("one-unit bottleneck", "underfitting", mlp(64, 64, 1, 64, 10), train, {}),
        ("10 sigmoid layers", "vanishing_gradients", mlp(64, *[64] * 10, 10, act=nn.Sigmoid), train, {}),
        ("AdamW lr=5 (blown up at once)", f"chance_level|{TOO_HIGH}", mlp(64, 128, 10), train,
         {"optim": {"lr": 5.0}}),
        ("features zeroed (broken scaling)", "chance_level", mlp(64, 128, 10),
         TensorDataset(torch.zeros_like(train.tensors[0]), train.tensors[1]), {}),
    ]


def main() -> None:
    train, val = digits()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for label, expected, model, data, sections in cases(train, val):
            config = {"log": {"progress": "off", "every_n_steps": 5, "grad_stats_every": 10},
                      "checkpoint": {"enabled": False}, "train": {"epochs": 10, "batch_size": 64}}
            for key, value in sections.items():
                config[key] = {**config.get(key, {}), **value}
            started = time.perf_counter()
            result = torchwise.fit(model, data, val, config=config, runs_dir=folder, quiet=True)
            diagnosis = diagnose_run(result.run_dir)
            got = [f.code for f in diagnosis.findings if f.severity in ("warn", "error")] or ["healthy"]
            ok = bool(set(expected.split("|")) & set(got))
            rows.append({"run": label, "expected": expected, "got": got, "ok": ok,
                         "seconds": round(time.perf_counter() - started, 1)})
            print(f"{label:40s} expected {expected:20s} got {', '.join(got):30s} {'ok' if rows[-1]['ok'] else 'MISS'}",
                  flush=True)
    out = Path(__file__).parent / "results" / "diagnose_check.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
