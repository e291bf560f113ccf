"""The space file: kinds, bounds, choices, and the same "did you mean" errors as overrides, all
before any trial starts (CLI: error:/hint:, exit 2, no sweep folder)."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

import torchwise.sweep.space
from torchwise.cli import main
from torchwise.sweep.space import Parameter, SpaceError, check_against_config, parse_space, read_space


def test_docstring_examples():
    assert doctest.testmod(torchwise.sweep.space).failed == 0


def test_yaml_bounds_written_1e_3_are_numbers(tmp_path):
    # PyYAML reads `1e-3` (no dot) as a string: a bound still means the number.
    path = tmp_path / "space.yaml"
    path.write_text("optim.lr: {log_float: [1e-4, 1e-1]}\ntrain.batch_size: {int: [16, 128], step: 16}\n")
    lr, batch = read_space(path)
    assert (lr.low, lr.high, lr.log) == (1e-4, 1e-1, True)
    assert (batch.low, batch.high, batch.step) == (16, 128, 16)
    assert batch.distribution().step == 16 and not batch.distribution().log


def test_a_list_choice_goes_to_optuna_as_json_and_comes_back_as_the_list():
    (hidden,) = parse_space({"model.kwargs.hidden": {"choice": [[64], [256, 128]]}})
    assert hidden.distribution().choices == ("[64]", "[256, 128]")
    assert hidden.value("[256, 128]") == [256, 128]
    assert hidden.override([256, 128]) == "model.kwargs.hidden=[256, 128]"


@pytest.mark.parametrize(("raw", "message", "hint"), [
    ({"optim.lr": {"log_float": [1e-3, 1e-3]}},
     "space: optim.lr: the range [0.001, 0.001] is empty (low must be below high)",
     "widen it, or set the key to 0.001 in the config (a fixed value is not searched)"),
    ({"optim.weight_decay": {"float": [0.1, 0.0]}},
     "space: optim.weight_decay: the range [0.1, 0.0] is empty (low must be below high)",
     "swap the bounds: [0.0, 0.1]"),
    ({"optim.lr": {"log_float": [0, 0.1]}},
     "space: optim.lr: a log range must lie above 0, and [0, 0.1] touches 0",
     "start it above 0, e.g. [0.0001, 0.1], or use float: for a linear range that includes 0"),
    ({"optim.lr": {"log_flaot": [1e-3, 1e-1]}}, "space: optim.lr: unknown distribution 'log_flaot'",
     "did you mean 'log_float'?"),
    ({"train.batch_size": {"int": [16.5, 64]}}, "space: train.batch_size: int needs [low, high], two integers; "
     "got [16.5, 64]", "e.g. int: [16, 128]"),
    ({"model.kwargs.hidden": {"choice": []}}, "space: model.kwargs.hidden: choice needs a non-empty list of values",
     "e.g. model.kwargs.hidden: {choice: [[64], [256, 128]]}"),
    ({"optim.lr": {"log_float": [1e-3, 1e-1], "step": 0.01}}, "space: optim.lr: a log range takes no step",
     "drop step, or use float"),
])
def test_bad_entries_are_named(raw, message, hint):
    with pytest.raises(SpaceError) as err:
        parse_space(raw)
    assert (err.value.message, err.value.hint) == (message, hint)


def test_unknown_key_gets_the_overrides_did_you_mean(tiny):
    config, _ = tiny
    with pytest.raises(SpaceError) as err:
        check_against_config(parse_space({"optim.lrr": {"log_float": [1e-3, 1e-1]}}), config, [])
    assert err.value.message == "space key optim.lrr = 0.001: unknown config key 'optim.lrr'"
    assert err.value.hint == "did you mean 'optim.lr'?"


def test_a_bound_the_schema_refuses_names_the_field(tiny):
    config, _ = tiny
    with pytest.raises(SpaceError) as err:  # train.batch_size must be >= 1
        check_against_config([Parameter("train.batch_size", "int", 0, 64)], config, [])
    assert err.value.message.startswith("space key train.batch_size = 0: invalid value 0 for 'train.batch_size'")
    assert err.value.hint == "train.batch_size: Samples per micro-batch (per forward/backward)."


@pytest.mark.parametrize(("space", "error", "hint"), [
    ("optim.lrr: {log_float: [1e-3, 1e-1]}\n", "error: space key optim.lrr = 0.001: unknown config key 'optim.lrr'",
     "hint: did you mean 'optim.lr'?"),
    ("optim.lr: {float: [0.1, 0.1]}\n", "error: {space}: optim.lr: the range [0.1, 0.1] is empty (low must be "
     "below high)", "hint: widen it, or set the key to 0.1 in the config (a fixed value is not searched)"),
    ("optim.lr: {log_float: [0.0, 0.1]}\n", "error: {space}: optim.lr: a log range must lie above 0, and [0.0, 0.1] "
     "touches 0", "hint: start it above 0, e.g. [0.0001, 0.1], or use float: for a linear range that includes 0"),
])
def test_cli_bad_space_exits_2_before_any_trial(tiny, tmp_path, capsys, space, error, hint):
    config, space_file = tiny
    space_file.write_text(space)
    with pytest.raises(SystemExit) as exit_:
        main(["sweep", str(config), "--space", str(space_file), "--run-dir", str(tmp_path / "runs"), "-q"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines() == [error.format(space=space_file), hint]
    assert not (tmp_path / "runs").exists()  # no sweep folder, no storage, no trial


def test_cli_unknown_pruner_and_no_traceback(tiny, tmp_path):
    config, space = tiny
    out = subprocess.run([sys.executable, "-m", "torchwise", "sweep", str(config), "--space", str(space),
                          "--pruner", "medain", "--run-dir", str(tmp_path / "runs")],
                         capture_output=True, text=True, cwd=Path(tmp_path))
    assert out.returncode == 2
    assert out.stderr.splitlines() == ["error: unknown pruner 'medain'",
                                       "hint: did you mean 'median'? pruners: median, hyperband, none"]
    assert not (tmp_path / "runs").exists()
