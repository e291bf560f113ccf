"""The rough edges a new user hit first: each gives its error, hint and exit code, and leaves
no run folder when nothing was trained."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tests.helpers import quiet_config, tiny_classification
from torch import nn

import torchwise
from torchwise.cli import main

QUIET = ["-q", "log.progress=off", "checkpoint.enabled=false", "train.epochs=1"]


def cli(tmp_path: Path, capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_:
        main([*args])
    out = capsys.readouterr()
    return exit_.value.code, out.out, out.err


def train(tmp_path: Path, capsys, config: str, *extra: str) -> tuple[int, str]:
    (tmp_path / "cfg.yaml").write_text(config)
    code, _, err = cli(tmp_path, capsys, "train", str(tmp_path / "cfg.yaml"), "--run-dir", str(tmp_path / "runs"),
                       *QUIET, *extra)
    return code, err


def test_an_empty_config_file_is_refused(tmp_path, capsys):
    code, err = train(tmp_path, capsys, "# nothing yet\n")
    assert code == 2
    assert err.splitlines() == [
        f"error: {tmp_path / 'cfg.yaml'} is empty",
        "hint: write the sections you want (data:, model:, train:); see examples/digits.yaml, "
        "or write {} to train every default"]
    assert not (tmp_path / "runs").exists()


def test_a_folder_is_named_a_folder(tmp_path, capsys):
    (tmp_path / "digits.yaml").write_text("{}\n")
    code, _, err = cli(tmp_path, capsys, "train", str(tmp_path))
    assert code == 2
    assert err.splitlines() == [f"error: '{tmp_path}' is a folder, not a config file",
                                "hint: pass a YAML file in it (digits.yaml)"]


def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path, capsys):
    code, err = train(tmp_path, capsys, "optim:\n  lr: 0.1\n train: {epochs: 2}\n")
    assert code == 2
    assert err.splitlines()[0].startswith(f"error: {tmp_path / 'cfg.yaml'}:3:2: not valid YAML: ")
    assert "<unicode string>" not in err
    assert err.splitlines()[1] == ("hint: check that line and the one above: indentation, colons, "
                                   "closing brackets and quotes")


def test_debug_shows_the_traceback_and_keeps_exit_code_2(tmp_path):
    (tmp_path / "cfg.yaml").write_text("optim:\n  lrr: 0.1\n")
    out = subprocess.run([sys.executable, "-m", "torchwise", "--debug", "train", str(tmp_path / "cfg.yaml")],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "Traceback" in out.stderr and "ConfigError" in out.stderr
    assert out.stderr.splitlines()[-2:] == ["error: unknown config key 'optim.lrr'",
                                            "hint: did you mean 'optim.lr'?"]


def test_a_crash_in_the_users_forward_names_the_file_and_line(tmp_path, capsys):
    (tmp_path / "typo_model.py").write_text(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(64, 10)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x) * scael\n")
    code, err = train(tmp_path, capsys, "model: {target: typo_model:Net}\n")
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == "error: training crashed: NameError: name 'scael' is not defined"
    assert lines[1:3] == [f"  at {tmp_path / 'typo_model.py'}:7 in forward", "    return self.fc(x) * scael"]
    assert "Traceback" not in err


def test_seven_typos_leave_no_run_folder(tmp_path, capsys):
    bad = ["data: {source: csv, path: nowhere.csv}\n", "data: {source: npz, path: missing.npz}\n",
           "model: {target: no_such_module:Net}\n", "model: {name: mlp, kwargs: {hiden: [8]}}\n",
           "model: {init_from: missing.safetensors}\n", "task: {loss: torch.nn:NoSuchLoss}\n",
           "data: {source: pt, path: missing.pt}\n"]
    for config in bad:
        code, err = train(tmp_path, capsys, config)
        assert code == 2 and err.startswith("error: ") and "\nhint: " in err, config
    assert not (tmp_path / "runs").exists()
    (tmp_path / "runs").mkdir()  # a runs folder that was there stays, empty
    assert train(tmp_path, capsys, bad[0])[0] == 2
    assert list((tmp_path / "runs").iterdir()) == []


def test_a_fit_that_fails_before_its_first_step_leaves_no_folder(tmp_path):
    with pytest.raises(torchwise.TorchwiseError):
        torchwise.fit(nn.Linear(5, 3), tiny_classification(), config=quiet_config(), runs_dir=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_init_from_counts_and_lists_the_same_keys(tmp_path):
    from torchwise.errors import WeightsMismatch

    state = {f"extra{i}.weight": torch.zeros(1) for i in range(6)}
    state.update(nn.Sequential(nn.Linear(6, 3)).state_dict())
    torch.save(state, tmp_path / "w.pt")
    config = quiet_config(model={"init_from": str(tmp_path / "w.pt")})
    with pytest.raises(WeightsMismatch) as error:
        torchwise.fit(nn.Sequential(nn.Linear(6, 3)), tiny_classification(), config=config, runs_dir=tmp_path)
    assert ("unexpected keys (6): ['extra0.weight', 'extra1.weight', 'extra2.weight', 'extra3.weight', "
            "'extra4.weight'] and 1 more") in error.value.message
    assert len(error.value.report.unexpected) == 6


def test_version(capsys):
    code, out, _ = cli(Path("."), capsys, "--version")
    assert code == 0 and out == f"torchwise {torchwise.__version__}\n"
