"""benchmarks/gpu.py runs where it can: it skips cleanly without CUDA, and --smoke runs it end to
end on the CPU (fit and the hand loop on a tiny GPT, the memory rows)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks/gpu.py"


@pytest.mark.skipif(torch.cuda.is_available(), reason="with CUDA the benchmark runs for real")
def test_without_cuda_it_says_so_and_exits_0(tmp_path):
    out = subprocess.run([sys.executable, str(SCRIPT), "--json", str(tmp_path / "gpu.json")],
                         capture_output=True, text=True, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("no CUDA device: the GPU benchmark is skipped")
    assert not (tmp_path / "gpu.json").exists()


@pytest.mark.slow
def test_smoke_runs_end_to_end_on_the_cpu(tmp_path):
    out = subprocess.run([sys.executable, str(SCRIPT), "--smoke", "--json", str(tmp_path / "gpu.json")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads((tmp_path / "gpu.json").read_text())
    assert result["hand_tokens_per_second"] > 0 and result["fit_tokens_per_second"] > 0
    assert len(result["memory_rows"]) == 10
    assert all(abs(row["error"]) <= 0.10 for row in result["memory_rows"])
