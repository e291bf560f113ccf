"""`import torchwise` stays cheap and `torchwise --help` fast: heavy modules load lazily.

Timings take the best of several interleaved runs (noise only ever adds time).
"""

from __future__ import annotations

import subprocess
import sys
import time

TORCH = [sys.executable, "-c", "import torch"]
# What `import torchwise` adds for a user who imports torch anyway: the API resolves lazily.
WITH_TORCHWISE = [sys.executable, "-c", "import torch, torchwise; torchwise.fit, torchwise.doctor"]


def run_time(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - start


def test_import_torchwise_costs_at_most_ten_percent_over_torch():
    torch_times, torchwise_times = [], []
    for _ in range(5):
        torch_times.append(run_time(TORCH))
        torchwise_times.append(run_time(WITH_TORCHWISE))
    assert min(torchwise_times) / min(torch_times) <= 1.10, (torchwise_times, torch_times)


def test_import_torchwise_does_not_import_torch():
    out = subprocess.run([sys.executable, "-c", "import sys, torchwise; print('torch' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_help_is_fast():
    assert min(run_time([sys.executable, "-m", "torchwise", "--help"]) for _ in range(3)) < 0.3
