"""env.json: what a run ran on (versions, device, threads, processes, the user's git commit)
and the doctor's bug-report facts, so that a result can be traced to its setup."""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from torchwise import __version__
from torchwise.config import RunConfig

if TYPE_CHECKING:
    from torchwise.train.distributed import Distributed
    from torchwise.train.precision import Precision


def environment(*, device: torch.device, precision: Precision, cfg: RunConfig,
                dist: Distributed | None = None) -> dict[str, Any]:
    import numpy

    env = {"torchwise": __version__, "torch": torch.__version__, "numpy": numpy.__version__,
           "python": platform.python_version(), "platform": platform.platform(),
           "device": str(device), "precision": precision.name, "cuda": torch.version.cuda,
           "threads": torch.get_num_threads(), "argv": sys.argv, "git_commit": git_commit(cfg.base_dir)}
    env["world_size"], env["backend"] = (dist.world, dist.backend) if dist else (1, None)
    if dist is not None:
        env["distributed"] = dist.kind
    if device.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(device)
    # The doctor's bug-report facts (driver, builds, packages); the checks themselves are not run.
    from torchwise.env.doctor import build_report
    from torchwise.env.probe import gather

    env["doctor"] = build_report(gather())
    return env


def git_commit(folder: Path | None) -> str | None:
    """The commit of the user's code (the config's folder), when it is a git checkout."""
    import subprocess

    if folder is None:
        return None
    try:
        out = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None
