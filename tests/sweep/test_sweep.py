"""A sweep in this process: trials are run folders with their parameters in config.yaml, the
loop's hook prunes, a lost trial is failed and re-asked as a resume of its run folder, best.yaml
trains, `runs` lists the trials and the report draws Optuna's three plots."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import optuna
import pytest
import yaml

import torchwise
from torchwise.config import load_config
from torchwise.errors import ConfigError
from torchwise.runs.folder import read_jsonl
from torchwise.runs.ledger import ledger_rows
from torchwise.runs.reader import read_run
from torchwise.sweep.pruning import TrialReporter
from torchwise.sweep.record import read_spec
from torchwise.sweep.report import write_sweep_report
from torchwise.sweep.storage import open_study
from torchwise.sweep.study import sweep
from torchwise.train.run import run_training


def study_of(sweep_dir: Path) -> optuna.Study:
    spec = read_spec(sweep_dir)
    return open_study(url=spec.storage, name=spec.study)


def test_the_hook_ends_a_run_as_pruned_and_runs_shows_it(tiny, tmp_path):
    config, _ = tiny
    seen = []

    def prune_at_first(state, value):
        seen.append((state.epoch, value))
        return True

    result = run_training(load_config(config), runs_dir=tmp_path / "runs", progress="off",
                          on_evaluation=prune_at_first)
    assert result.status == "pruned" and result.summary["epochs"] == 1
    assert len(seen) == 1 and seen[0][0] == 1 and seen[0][1] == pytest.approx(result.best["value"])
    assert result.summary["reason"].startswith("pruned at epoch 1: val_loss=")
    assert [e["event"] for e in read_jsonl(result.run_dir / "events.jsonl")][-1] == "pruned"
    assert json.loads((result.run_dir / "checkpoints" / "last" / "meta.json").read_text())["epoch"] == 1
    (row,) = ledger_rows(tmp_path / "runs")
    assert row["status"] == "pruned"


def test_a_hook_that_never_prunes_changes_nothing(tiny, tmp_path):
    config, _ = tiny
    plain = run_training(load_config(config), runs_dir=tmp_path / "a", progress="off")
    hooked = run_training(load_config(config), runs_dir=tmp_path / "b", progress="off",
                          on_evaluation=lambda state, value: False)
    assert hooked.status == plain.status == "completed"
    assert hooked.summary["final"] == plain.summary["final"]  # the same numbers, bit for bit


def test_reporter_reports_by_epoch_and_answers_the_pruner(tiny):
    study = optuna.create_study(pruner=optuna.pruners.ThresholdPruner(upper=1.0))
    trial = study.ask()
    reporter = TrialReporter(trial)

    class State:
        epoch, step = 2, 10

    assert reporter(State(), 0.5) is False
    State.epoch = 3
    assert reporter(State(), 2.0) is True  # above the threshold: prune
    assert study.trials[0].intermediate_values == {2: 0.5, 3: 2.0}
    by_steps = TrialReporter(study.ask(), by_steps=True)
    by_steps(State(), 0.25)
    assert study.trials[1].intermediate_values == {10: 0.25}


def test_a_small_sweep_end_to_end(tiny, tmp_path):
    config, space = tiny
    result = torchwise.sweep(config, space, trials=3, pruner="none", runs_dir=tmp_path / "runs", quiet=True)
    sweep_dir = tmp_path / "runs" / "tiny-sweep"
    assert result.sweep_dir == sweep_dir and result.counts == {"complete": 3}
    study = study_of(sweep_dir)
    params = [json.dumps(t.params, sort_keys=True) for t in study.trials]
    assert len(set(params)) == 3
    for trial in study.trials:  # each trial's parameters are in its run folder's config
        run = read_run(Path(trial.user_attrs["run_dir"]))
        assert run.path.parent == sweep_dir and run.status == "completed"
        assert run.config["optim"]["lr"] == trial.params["optim.lr"]
        assert json.dumps(run.config["model"]["kwargs"]["hidden"]) == trial.params["model.kwargs.hidden"]
        assert trial.value == run.summary["best"]["value"]
    best = study.best_trial
    assert result.best["trial"] == best.number and result.best["value"] == best.value
    assert read_spec(sweep_dir).best == result.best
    # best.yaml is the best run's config under a new name, and `torchwise train` takes it.
    best_cfg = load_config(result.best_config)
    run_cfg = yaml.safe_load((Path(best.user_attrs["run_dir"]) / "config.yaml").read_text())
    assert best_cfg.name == "tiny-sweep-best"
    assert best_cfg.to_yaml_dict() == {**run_cfg, "name": "tiny-sweep-best"}
    assert [row["name"] for row in ledger_rows(sweep_dir)] == ["trial-0000", "trial-0001", "trial-0002"]
    page = write_sweep_report(sweep_dir).read_text()
    titles = re.findall(r'<img alt="([^"]+)"', page)
    assert titles == ["optimisation history", "parameter importance", "parallel coordinates"]
    assert "<script" not in page and "http" not in page.replace("http-equiv", "")
    # The same call again: the study already holds 3 trials, so nothing more runs; 4 adds one.
    assert sweep(config, space, trials=3, pruner="none", runs_dir=tmp_path / "runs", quiet=True).counts == \
        {"complete": 3}
    assert sweep(config, space, trials=4, pruner="none", runs_dir=tmp_path / "runs", quiet=True).counts == \
        {"complete": 4}


def test_another_space_in_the_same_folder_is_refused(tiny, tmp_path):
    config, space = tiny
    sweep(config, space, trials=1, pruner="none", runs_dir=tmp_path / "runs", quiet=True)
    space.write_text("optim.lr: {log_float: [1e-4, 1e-2]}\n")
    with pytest.raises(ConfigError) as err:
        sweep(config, space, trials=2, pruner="none", runs_dir=tmp_path / "runs", quiet=True)
    assert err.value.message == f"{tmp_path / 'runs' / 'tiny-sweep'} already holds a sweep with another config, " \
                                "space or storage"
    assert err.value.hint == "continue it with the same arguments, or give this one another --name"


def test_a_lost_trial_is_failed_and_its_parameters_resume_its_run_folder(tiny, tmp_path):
    config, space = tiny
    runs = tmp_path / "runs"
    sweep(config, space, trials=2, pruner="none", runs_dir=runs, quiet=True)
    sweep_dir = runs / "tiny-sweep"
    spec, study = read_spec(sweep_dir), study_of(sweep_dir)
    # A worker that died mid-trial: its folder's lock is free, the trial still says running.
    lost = study.ask({p.key: p.distribution() for p in spec.parameters()})
    dead_worker = sweep_dir / ".workers" / "gone-1"
    dead_worker.mkdir(parents=True)
    lost.set_user_attr("worker", str(dead_worker))
    lost.set_user_attr("host", socket.gethostname())
    run_dir = sweep_dir / f"trial-{lost.number:04d}"
    lost.set_user_attr("run_dir", str(run_dir))
    values = {p.key: p.value(lost.params[p.key]) for p in spec.parameters()}
    cfg = load_config(config, [p.override(values[p.key]) for p in spec.parameters()])

    def die_in_epoch_two(state, value):
        if state.epoch == 2:  # before epoch 2's checkpoint: `last` holds epoch 1
            raise KeyboardInterrupt
        return False

    with pytest.raises(KeyboardInterrupt):
        run_training(cfg, runs_dir=sweep_dir, name=run_dir.name, progress="off", on_evaluation=die_in_epoch_two)

    result = sweep(config, space, trials=3, pruner="none", runs_dir=runs, quiet=True)
    assert result.counts == {"complete": 3, "fail": 1}
    trials = study_of(sweep_dir).trials
    assert trials[lost.number].state == optuna.trial.TrialState.FAIL
    (retry,) = [t for t in trials if t.user_attrs.get("retry_of") == lost.number]
    assert retry.state == optuna.trial.TrialState.COMPLETE and retry.params == lost.params
    assert retry.user_attrs["run_dir"] == str(run_dir)
    complete = [json.dumps(t.params, sort_keys=True) for t in trials if t.state.name == "COMPLETE"]
    assert len(set(complete)) == 3  # no parameter set twice
    events = [e for e in read_jsonl(run_dir / "events.jsonl") if e["event"] == "resume"]
    assert len(events) == 1 and events[0]["epoch"] == 1
    run = read_run(run_dir)
    assert run.status == "completed" and run.summary["epochs"] == 2
    assert retry.value == run.summary["best"]["value"]
