"""The sweep's own record, ``SWEEP_DIR/sweep.json``, beside its trials' run folders.

It holds what every worker needs to run a trial (config, fixed overrides, space, storage, study
name, sampler, pruner, seed, trial count) and, once the sweep ends, its best trial. The study
itself (every trial's parameters, reports and state) lives in the Optuna storage it names.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from torchwise.errors import ConfigError
from torchwise.sweep.space import Parameter, parse_space

SPEC_NAME = "sweep.json"
BEST_CONFIG = "best.yaml"


@dataclass
class SweepSpec:
    """Everything a worker reads from sweep.json."""

    name: str
    study: str
    storage: str
    config: str | None
    space: dict[str, Any]
    trials: int
    monitor: str
    direction: str  # "minimize" or "maximize"
    sampler: str = "tpe"
    pruner: str = "median"
    seed: int = 0
    overrides: list[str] = field(default_factory=list)
    max_resource: int | None = None  # epochs (or steps) of one trial, for Hyperband
    best: dict[str, Any] | None = None

    def parameters(self) -> list[Parameter]:
        return parse_space(self.space)

    def same_search(self, other: SweepSpec) -> bool:
        """The same study, config, overrides and space: a restart or another worker may join."""
        keys = ("study", "storage", "config", "space", "overrides", "monitor", "direction")
        return all(getattr(self, k) == getattr(other, k) for k in keys)


def is_sweep_folder(path: Path) -> bool:
    return (Path(path) / SPEC_NAME).is_file()


def read_spec(sweep_dir: Path) -> SweepSpec:
    path = Path(sweep_dir) / SPEC_NAME
    try:
        data = json.loads(path.read_text())
        return SweepSpec(**data)
    except (OSError, ValueError, TypeError) as err:
        raise ConfigError(f"{sweep_dir} is not a readable sweep folder ({SPEC_NAME}: {type(err).__name__})",
                          hint="pass the folder `torchwise sweep` made, e.g. runs/digits-sweep") from None


def write_spec(sweep_dir: Path, spec: SweepSpec) -> None:
    from torchwise.runs.folder import write_json_atomic

    write_json_atomic(Path(sweep_dir) / SPEC_NAME, asdict(spec))
