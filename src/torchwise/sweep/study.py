"""A sweep from start to end: check the space, set up the folder and the study, run the workers,
then write the best trial's config.

>>> result = sweep("examples/digits.yaml", "space.yaml", trials=4)  # doctest: +SKIP
>>> result.best["params"]  # doctest: +SKIP
{'optim.lr': 0.0031, 'model.kwargs.hidden': [256, 128]}
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchwise.errors import ConfigError
from torchwise.sweep.record import BEST_CONFIG, SweepSpec, read_spec, write_spec
from torchwise.sweep.space import Parameter, check_against_config, read_space
from torchwise.sweep.storage import PRUNERS, SAMPLERS, check_name, open_study, storage_url


@dataclass
class SweepResult:
    """How a sweep ended: its folder, trial counts by state, and the best trial (None if none completed)."""

    sweep_dir: Path
    counts: dict[str, int]
    best: dict[str, Any] | None

    @property
    def best_config(self) -> Path | None:
        """The best trial's config, ready for ``torchwise train``."""
        return self.sweep_dir / BEST_CONFIG if self.best else None


def sweep(config: str | Path | None, space: str | Path, *, trials: int = 20, jobs: int = 1,
          storage: str | None = None, name: str | None = None, runs_dir: str | Path = "runs",
          sampler: str = "tpe", pruner: str = "median", seed: int | None = None,
          overrides: Sequence[str] = (), quiet: bool = False) -> SweepResult:
    """Search ``space`` (a space file) around ``config`` with Optuna; each trial is a run folder
    under ``runs_dir/name`` (default name: the config's name + ``-sweep``).

    Starting it again with the same arguments continues the same study; so does a second process
    given the same ``storage`` and ``name``. Bad input (an unknown key, an empty range, a log range
    touching 0, an unknown sampler) raises a `ConfigError` before any trial starts.
    """
    from torchwise.config import load_config
    from torchwise.train.guards import monitor_mode

    if trials < 1 or jobs < 1:
        raise ConfigError(f"--trials and --jobs must be at least 1 (got {trials} and {jobs})",
                          hint="e.g. --trials 20 --jobs 2")
    check_name("sampler", sampler, SAMPLERS)
    check_name("pruner", pruner, PRUNERS)
    config_path = Path(config).resolve() if config is not None else None
    parameters = read_space(Path(space))
    check_against_config(parameters, config_path, overrides)
    cfg = load_config(config_path, list(overrides))
    name = name or f"{cfg.name or 'run'}-sweep"
    sweep_dir = Path(runs_dir) / name
    spec = SweepSpec(
        name=name, study=name, storage=storage_url(storage, sweep_dir),
        config=str(config_path) if config_path else None, space=space_mapping(parameters), trials=trials,
        monitor=cfg.train.monitor,
        direction="maximize" if monitor_mode(cfg.train.monitor, cfg.train.monitor_mode) == "max" else "minimize",
        sampler=sampler, pruner=pruner, seed=cfg.train.seed if seed is None else seed, overrides=list(overrides),
        max_resource=cfg.train.max_steps if cfg.train.eval_every else cfg.train.epochs)
    join_or_create(sweep_dir, spec)
    view = None
    if not quiet:
        from torchwise.sweep.table import LiveTable

        view = LiveTable(sweep_dir)
    try:
        run_workers(sweep_dir, jobs=jobs, on_change=view.refresh if view else None)
    finally:
        if view is not None:
            view.close()
    return finish(sweep_dir)


def space_mapping(parameters: list[Parameter]) -> dict[str, Any]:
    """The parsed space back as a space-file mapping (what sweep.json and the study record)."""
    out: dict[str, Any] = {}
    for p in parameters:
        entry: dict[str, Any] = {p.kind: list(p.choices) if p.kind == "choice" else [p.low, p.high]}
        if p.step is not None:
            entry["step"] = p.step
        out[p.key] = entry
    return out


def join_or_create(sweep_dir: Path, spec: SweepSpec) -> None:
    """Write sweep.json, or check that the one there (a restart) searches the same thing; create the
    study, or check that the one in the storage (another machine's) searches the same space."""
    if (sweep_dir / "sweep.json").is_file():
        existing = read_spec(sweep_dir)
        if not existing.same_search(spec):
            raise ConfigError(f"{sweep_dir} already holds a sweep with another config, space or storage",
                              hint="continue it with the same arguments, or give this one another --name")
        spec.best = existing.best
    sweep_dir.mkdir(parents=True, exist_ok=True)
    study = open_study(url=spec.storage, name=spec.study, direction=spec.direction)
    recorded = study.user_attrs.get("space")
    if recorded is None:
        study.set_user_attr("space", spec.space)
        study.set_user_attr("monitor", spec.monitor)
    elif recorded != spec.space:
        raise ConfigError(f"the study {spec.study!r} in {spec.storage} searches another space",
                          hint="pass the same space file as the other workers, or another --name")
    write_spec(sweep_dir, spec)


def run_workers(sweep_dir: Path, *, jobs: int, on_change: Any = None) -> None:
    """One worker in this process, or ``jobs`` worker processes sharing the storage."""
    from torchwise.sweep.worker import work

    if jobs == 1:
        try:
            work(sweep_dir, on_change=on_change)
        except KeyboardInterrupt:
            pass  # the interrupted trial is queued again with its run folder: the next start resumes it
        return
    workers = [subprocess.Popen([sys.executable, "-m", "torchwise.sweep.worker", str(sweep_dir), str(index)])
               for index in range(jobs)]
    try:
        while any(w.poll() is None for w in workers):
            if on_change is not None:
                on_change()
            time.sleep(1.0)
    except KeyboardInterrupt:
        for w in workers:
            w.wait()  # the terminal's Ctrl-C reached them too: each checkpoints its trial and stops


def finish(sweep_dir: Path) -> SweepResult:
    """Counts by state; the best trial's config as best.yaml; the best trial in sweep.json."""
    import yaml
    from optuna.trial import TrialState

    spec = read_spec(sweep_dir)
    study = open_study(url=spec.storage, name=spec.study)
    trials = study.get_trials(deepcopy=False)
    counts: dict[str, int] = {}
    for trial in trials:
        counts[trial.state.name.lower()] = counts.get(trial.state.name.lower(), 0) + 1
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    best = None
    if complete:
        chosen = study.best_trial
        run_dir = Path(chosen.user_attrs["run_dir"])
        config = yaml.safe_load((run_dir / "config.yaml").read_text())
        config["name"] = f"{spec.name}-best"
        (sweep_dir / BEST_CONFIG).write_text(
            f"# The best trial of sweep {spec.name} (trial {chosen.number}, {spec.monitor}={chosen.value:.6g}).\n"
            f"# Train it: torchwise train {sweep_dir / BEST_CONFIG}\n" + yaml.safe_dump(config, sort_keys=False))
        parameters = {p.key: p for p in spec.parameters()}
        best = {"trial": chosen.number, "value": chosen.value, "metric": spec.monitor,
                "params": {k: parameters[k].value(v) for k, v in chosen.params.items()},
                "run_dir": str(run_dir), "config": str(sweep_dir / BEST_CONFIG)}
        spec.best = best
        write_spec(sweep_dir, spec)
    return SweepResult(sweep_dir=sweep_dir, counts=counts, best=best)
