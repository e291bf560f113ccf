"""One sweep worker: ask the study for a trial, train it as a run folder, tell the result; repeat.

Several workers (``--jobs K``, or other ``torchwise sweep`` processes on the same storage) share
one study. Three things keep the count exact and the history honest:

- Asking is done under the sweep folder's ask lock (an OS file lock), after counting finished
  and running trials, so that workers on one machine never start more than N trials between them.
- Each worker holds an OS lock on its own folder ``.workers/<host>-<pid>`` for its whole life.
  A trial that the study says is running but whose worker's lock is free lost its process
  (kill -9, out of memory, a power cut): it is marked failed and its parameters are asked
  again, as a trial that resumes the old run folder from ``checkpoints/last`` (or starts over
  when the run had no checkpoint yet).
- The sampler is seeded per ask from ``seed`` and the trials so far: a restarted sweep draws new
  parameters instead of replaying the first process's draws.

Run as ``python -m torchwise.sweep.worker SWEEP_DIR`` for the extra processes of ``--jobs``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from torchwise.sweep.record import SweepSpec, read_spec
from torchwise.sweep.storage import build_pruner, build_sampler, open_study

WORKERS = ".workers"
TAKEN_NAMES = ("COMPLETE", "PRUNED", "RUNNING", "WAITING")  # states that hold one of the N places
ASK_LOCK = ".ask.lock"


@contextlib.contextmanager
def ask_lock(sweep_dir: Path) -> Iterator[None]:
    """Held while one worker counts trials and asks for the next (blocking; released at exit)."""
    fd = os.open(sweep_dir / ASK_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock


def work(sweep_dir: Path, *, index: int = 0, on_change: Callable[[], None] | None = None) -> int:
    """Run trials until the study holds ``spec.trials`` complete-or-pruned ones; returns how
    many this worker ran. ``on_change`` is called after each report and each trial (a live view)."""
    from optuna.trial import TrialState

    from torchwise.runs.lock import RunLock

    spec = read_spec(sweep_dir)
    folder = sweep_dir / WORKERS / f"{socket.gethostname()}-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    lock = RunLock.acquire(folder)
    study = open_study(url=spec.storage, name=spec.study,
                       pruner=build_pruner(spec.pruner, max_resource=spec.max_resource))
    ran = 0
    try:
        while True:
            with ask_lock(sweep_dir):
                recover_lost_trials(study)
                if not room_for_another(study, spec):
                    break
                trial = ask(study, spec, index=index)
                trial.set_user_attr("worker", str(folder.resolve()))
                trial.set_user_attr("host", socket.gethostname())
                if surplus(study, trial.number, spec.trials):  # a worker elsewhere took the last place
                    trial.set_user_attr("surplus", True)
                    study.tell(trial, state=TrialState.FAIL)
                    break
            run_trial(study, trial, spec, sweep_dir, on_change=on_change)
            ran += 1
            if on_change is not None:
                on_change()
    finally:
        lock.release()
    return ran


def room_for_another(study: Any, spec: SweepSpec) -> bool:
    """A retry waits to be run, or fewer than N trials are finished, running or waiting; and fewer
    than N trials failed on their own (a sweep whose every trial fails stops, not spins)."""
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False)
    waiting = sum(t.state == TrialState.WAITING for t in trials)
    taken = sum(t.state.name in TAKEN_NAMES for t in trials)
    failed = sum(t.state == TrialState.FAIL and not t.user_attrs.get("surplus") for t in trials) - sum(
        "retry_of" in t.user_attrs for t in trials)
    return (waiting > 0 or taken < spec.trials) and failed < spec.trials


def surplus(study: Any, number: int, trials: int) -> bool:
    """Trial ``number`` comes after N others that are finished, running or waiting. Workers on one
    machine never get here (the ask lock counts first); workers on several machines sharing an
    RDB URL do, and the storage's numbering decides which trial is one too many."""
    return sum(t.number < number and t.state.name in TAKEN_NAMES for t in study.get_trials(deepcopy=False)) >= trials


def ask(study: Any, spec: SweepSpec, *, index: int) -> Any:
    # Re-seeded per ask: the trial count differs for every ask under the lock, so two workers (or
    # a restarted sweep) never repeat one another's draws, and the same history gives the same draw.
    # Processes on other machines (an RDB URL) do not share the lock: their pid tells their draws apart.
    elsewhere = os.getpid() % 997 if "://" in spec.storage else 0
    count = len(study.get_trials(deepcopy=False))
    study.sampler = build_sampler(spec.sampler, seed=spec.seed + 1000 * count + index + elsewhere)
    return study.ask({p.key: p.distribution() for p in spec.parameters()})


def recover_lost_trials(study: Any) -> list[int]:
    """Fail each running trial whose worker on this machine is gone, and ask its parameters again."""
    from optuna.trial import TrialState

    from torchwise.runs.lock import lock_held

    lost = []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        worker = trial.user_attrs.get("worker")
        if trial.user_attrs.get("host") != socket.gethostname() or not worker or not Path(worker).is_dir():
            continue  # another machine's worker (or one still between ask and its first attribute)
        if lock_held(Path(worker)):
            continue
        study.tell(trial.number, state=TrialState.FAIL)
        attrs = {"retry_of": trial.number}
        if "run_dir" in trial.user_attrs:
            attrs["run_dir"] = trial.user_attrs["run_dir"]
        study.enqueue_trial(dict(trial.params), user_attrs=attrs)
        lost.append(trial.number)
    return lost


def run_trial(study: Any, trial: Any, spec: SweepSpec, sweep_dir: Path, *,
              on_change: Callable[[], None] | None = None) -> None:
    """Train the trial's config as a run folder and tell the study how it ended."""
    from optuna.trial import TrialState

    from torchwise.config import load_config
    from torchwise.errors import TorchwiseError
    from torchwise.sweep.pruning import TrialReporter
    from torchwise.train.resume import load_run_config
    from torchwise.train.run import run_training

    parameters = spec.parameters()
    values = {p.key: p.value(trial.params[p.key]) for p in parameters}
    overrides = [*spec.overrides, *(p.override(values[p.key]) for p in parameters)]
    earlier = Path(trial.user_attrs["run_dir"]) if "run_dir" in trial.user_attrs else None
    resume_dir = earlier if earlier is not None and (earlier / "checkpoints" / "last" / "meta.json").is_file() else None
    try:
        if resume_dir is not None:
            cfg = load_run_config(resume_dir)
        else:
            cfg = load_config(spec.config, overrides)
        reporter = TrialReporter(trial, by_steps=cfg.train.eval_every is not None, on_report=on_change)
        if resume_dir is not None:
            trial.set_user_attr("run_dir", str(resume_dir))
            result = run_training(cfg, resume_dir=resume_dir, progress="off", on_evaluation=reporter)
        else:
            run_dir = sweep_dir / f"trial-{trial.number:04d}"
            trial.set_user_attr("run_dir", str(run_dir.resolve()))  # before training: a lost trial names it
            result = run_training(cfg, runs_dir=sweep_dir, name=run_dir.name, progress="off",
                                  on_evaluation=reporter)
            trial.set_user_attr("run_dir", str(result.run_dir.resolve()))
    except (TorchwiseError, Exception) as err:  # one bad parameter set fails its trial, not the sweep
        trial.set_user_attr("reason", f"{type(err).__name__}: {getattr(err, 'message', err)}"[:500])
        study.tell(trial, state=TrialState.FAIL)
        return
    trial.set_user_attr("status", result.status)
    best = result.best
    if result.status == "interrupted":  # Ctrl-C / SIGTERM: the next start resumes it from `last`
        study.tell(trial, state=TrialState.FAIL)
        study.enqueue_trial(dict(trial.params), user_attrs={"retry_of": trial.number,
                                                            "run_dir": str(result.run_dir.resolve())})
        raise KeyboardInterrupt
    if result.status == "pruned":
        study.tell(trial, state=TrialState.PRUNED)
    elif best is None or best.get("value") is None or result.status == "failed":
        trial.set_user_attr("reason", result.summary.get("reason") or f"no {spec.monitor} was recorded")
        study.tell(trial, state=TrialState.FAIL)
    else:
        study.tell(trial, float(best["value"]))


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if sys.platform == "linux":  # die with the sweep process that started this worker
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    with contextlib.suppress(KeyboardInterrupt):
        work(Path(args[0]), index=int(args[1]) if len(args) > 1 else 0)


if __name__ == "__main__":
    main()
