"""Seeding and RNG state: one place, used by data loading and by the loop.

>>> seed_everything(7)
>>> import random; a = random.random(); seed_everything(7); a == random.random()
True
"""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np
import torch


def seed_everything(seed: int, *, deterministic: bool = False) -> None:
    """Seed python, numpy and torch (CPU and every CUDA device).

    With ``deterministic`` also ask torch for deterministic kernels, and set the cuBLAS
    workspace and cuDNN flags that those kernels need on CUDA.
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if deterministic:
        # cuBLAS needs a fixed workspace to be deterministic; it reads this at first use.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def seed_rank(seed: int, rank: int) -> None:
    """Give this process of a torchrun group its own random stream: ``seed + rank`` (Accelerate's
    ``set_seed(seed, device_specific=True)`` convention), so ranks draw different dropout masks.

    Called after the model is built: every rank initialises the same weights from ``seed`` (FSDP
    shards the weights each rank made, it does not broadcast them), then trains on its own stream.
    """
    random.seed(seed + rank)
    np.random.seed((seed + rank) % 2**32)
    torch.manual_seed(seed + rank)


def seed_worker(worker_id: int) -> None:
    """DataLoader ``worker_init_fn``: derive python and numpy seeds from torch's worker seed.

    torch gives each worker ``base_seed + worker_id`` (base_seed drawn from the loader's
    generator); numpy and python are not seeded by torch, so augmentations using them would
    repeat across workers without this.
    """
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def epoch_seed(seed: int, epoch: int) -> int:
    """The seed of one epoch's shuffle and worker seeds: a pure function, so resume can rebuild it."""
    return (seed * 1_000_003 + epoch) % 2**63


def capture_rng_state() -> dict[str, Any]:
    """Every global RNG state, as plain python/numpy/tensor values (no pickle needed)."""
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    """Inverse of `capture_rng_state`."""
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), int(pos), int(has_gauss), float(cached)))
    torch.set_rng_state(state["torch"].cpu())
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in state["cuda"]])
