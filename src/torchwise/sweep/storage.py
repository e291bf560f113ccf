"""Where a sweep's study lives (Optuna storage) and how it samples and prunes.

The default storage is an Optuna journal file in the sweep folder (``study.journal``): append-
only, safe for several worker processes on one machine, and readable after a kill -9. An RDB
URL (``sqlite:///sweep.db``, ``postgresql://host/db``) puts the study in a database instead, for
workers on several machines. A path without ``://`` is another journal file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchwise.errors import ConfigError

JOURNAL_NAME = "study.journal"
SAMPLERS = ("tpe", "random", "qmc")
PRUNERS = ("median", "hyperband", "none")


def storage_url(storage: str | None, sweep_dir: Path) -> str:
    """The storage as recorded in sweep.json: an RDB URL as given, a journal file as an absolute path."""
    if storage is None:
        return str((sweep_dir / JOURNAL_NAME).resolve())
    if storage.startswith("sqlite:///") and not storage.startswith("sqlite:////"):
        # a relative SQLite file: pinned to this folder, so reports and workers elsewhere find it
        return f"sqlite:///{Path(storage.removeprefix('sqlite:///')).resolve()}"
    return storage if "://" in storage else str(Path(storage).resolve())


def open_storage(url: str) -> Any:
    """An Optuna storage for ``url`` (see `storage_url`)."""
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    if "://" in url:
        try:
            return rdb_storage(url)
        except Exception as err:  # a wrong URL or a missing driver: say which
            raise ConfigError(f"cannot open the sweep storage {url!r}: {type(err).__name__}: {err}",
                              hint="an SQLAlchemy URL such as sqlite:///sweep.db or postgresql://user@host/db "
                                   "(with its driver installed), or a file path for a journal file") from None
    Path(url).parent.mkdir(parents=True, exist_ok=True)
    return JournalStorage(JournalFileBackend(url))


def rdb_storage(url: str, attempts: int = 5) -> Any:
    """An RDBStorage; two processes creating a new database's tables at the same instant collide
    (one insert of the schema version wins), so the loser waits and opens the finished one."""
    import time

    import optuna
    from sqlalchemy.exc import IntegrityError, OperationalError

    for attempt in range(attempts):
        try:
            return optuna.storages.RDBStorage(url)
        except (IntegrityError, OperationalError):
            if attempt == attempts - 1:
                raise
            time.sleep(0.5 * (attempt + 1))
    raise AssertionError("unreachable")


def build_sampler(name: str, *, seed: int) -> Any:
    import optuna

    check_name("sampler", name, SAMPLERS)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "qmc":
        return optuna.samplers.QMCSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed)


def build_pruner(name: str, *, max_resource: int | None) -> Any:
    """``median``: stop a trial whose value is worse than the median of earlier trials at the same
    evaluation, once 5 trials have finished (at any evaluation: positions start at 1); ``hyperband``:
    successive halving over evaluations; ``none``: every trial runs to its end."""
    import optuna

    check_name("pruner", name, PRUNERS)
    if name == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=1)
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=1, max_resource=max_resource or "auto",
                                              reduction_factor=3)
    return optuna.pruners.NopPruner()


def check_name(what: str, name: str, known: tuple[str, ...]) -> None:
    if name not in known:
        import difflib

        close = difflib.get_close_matches(name, known, n=1)
        raise ConfigError(f"unknown {what} {name!r}",
                          hint=(f"did you mean '{close[0]}'? " if close else "") + f"{what}s: {', '.join(known)}")


def open_study(*, url: str, name: str, direction: str | None = None, pruner: Any = None) -> Any:
    """The study ``name`` in ``url``; with ``direction`` it is created when absent."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)  # our table says what happens, not a log line per trial
    storage = open_storage(url)
    if direction is None:
        return optuna.load_study(study_name=name, storage=storage, pruner=pruner)
    return optuna.create_study(study_name=name, storage=storage, direction=direction, pruner=pruner,
                               load_if_exists=True)
