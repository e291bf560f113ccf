"""`torchwise sweep CONFIG --space SPACE.yaml`: a hyperparameter search, each trial a run folder."""

from __future__ import annotations

from pathlib import Path

import typer


def command(
    config: Path = typer.Argument(..., help="YAML config file the trials start from (see examples/)."),
    overrides: list[str] = typer.Argument(None, help="key=value overrides every trial gets, e.g. train.epochs=10"),
    space: Path = typer.Option(..., "--space", help="YAML file of config keys and distributions (docs/sweep.md)."),
    trials: int = typer.Option(20, "--trials", "-n", help="Complete-or-pruned trials the study ends with."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Worker processes on this machine, sharing the storage."),
    storage: str = typer.Option(None, "--storage", help="Optuna storage: an RDB URL (sqlite:///s.db, "
                                                        "postgresql://...) or a journal file path; default: "
                                                        "SWEEP_DIR/study.journal."),
    name: str = typer.Option(None, "--name", help="Sweep (and study) name; default: the config's name + -sweep."),
    run_dir: Path = typer.Option(Path("runs"), "--run-dir", help="Folder that holds the sweep's folder."),
    sampler: str = typer.Option("tpe", "--sampler", help="tpe, random or qmc."),
    pruner: str = typer.Option("median", "--pruner", help="median, hyperband or none."),
    seed: int = typer.Option(None, "--seed", help="Sampler seed (default: the config's train.seed)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live table, only the result."),
) -> None:
    """Search the space with Optuna. Each trial is a run folder under RUN_DIR/NAME/, reports
    train.monitor at every evaluation and may end `pruned`. Run the same command again to continue
    after a crash or Ctrl-C (the interrupted trial resumes from its checkpoint); give other processes
    the same --storage and --name to share the study. At the end: the best trial's config as
    NAME/best.yaml (ready for `torchwise train`) and its diagnosis; `torchwise runs RUN_DIR/NAME` lists
    the trials and `torchwise report RUN_DIR/NAME` plots the search."""
    from torchwise.cli.render import print_diagnosis
    from torchwise.sweep.study import sweep

    result = sweep(config, space, trials=trials, jobs=jobs, storage=storage, name=name, runs_dir=run_dir,
                   sampler=sampler, pruner=pruner, seed=seed, overrides=overrides or [], quiet=quiet)
    counts = ", ".join(f"{n} {state}" for state, n in sorted(result.counts.items()))
    print(f"sweep {result.sweep_dir}: {counts or 'no trials'}")
    if result.best is None:
        print("no trial completed; see `torchwise runs` on the sweep folder for the reasons")
        raise typer.Exit(1)
    best = result.best
    params = " ".join(f"{k}={v}" for k, v in best["params"].items())
    print(f"best: trial {best['trial']}, {best['metric']} {best['value']:.4g} ({params})")
    print(f"best config: {result.best_config}  (train it: torchwise train {result.best_config})")
    print_diagnosis(Path(best["run_dir"]))
