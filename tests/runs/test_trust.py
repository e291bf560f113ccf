"""Run-folder signatures: the per-user key, signing, and every way a folder stops being trusted."""

from __future__ import annotations

import json
import os
import shutil
import stat

import pytest

from torchwise.errors import TrustError, UntrustedCodeError
from torchwise.runs.trust import (
    KEY_FILE,
    SIGNATURE_FILE,
    check_run_trust,
    code_targets,
    config_dir,
    sign_run,
    user_key,
    verify_run,
)


@pytest.fixture
def key_dir(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    monkeypatch.setenv("TORCHWISE_CONFIG_DIR", str(folder))
    return folder


def make_run(path, config="model: {name: mlp}\n", metas=("last",)):
    path.mkdir(parents=True)
    (path / "config.yaml").write_text(config)
    for name in metas:
        (path / "checkpoints" / name).mkdir(parents=True)
        (path / "checkpoints" / name / "meta.json").write_text(json.dumps({"step": 3, "name": name}))
    return path


def test_config_dir_honours_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHWISE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_dir() == tmp_path / "xdg" / "torchwise"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_dir() == tmp_path / "home" / ".config" / "torchwise"
    monkeypatch.setenv("TORCHWISE_CONFIG_DIR", str(tmp_path / "explicit"))
    assert config_dir() == tmp_path / "explicit"


def test_key_is_created_once_private_to_the_user(key_dir):
    assert user_key(create=False) is None
    key = user_key()
    path = key_dir / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_dir.stat().st_mode) & 0o077 == 0
    assert len(key) == 32 and user_key() == key
    assert [p.name for p in key_dir.iterdir()] == [KEY_FILE]  # no temp file left behind


def test_a_key_others_can_read_is_refused(key_dir):
    user_key()
    os.chmod(key_dir / KEY_FILE, 0o644)
    with pytest.raises(TrustError) as caught:
        user_key()
    assert caught.value.hint.startswith(f"make it private: chmod 600 {key_dir / KEY_FILE}")


def test_signed_folder_is_trusted_and_every_tamper_is_named(key_dir, tmp_path):
    run = make_run(tmp_path / "run", metas=("last", "best"))
    assert verify_run(run).reason == "it has no signature, so it was not written by torchwise on this account"
    sign_run(run)
    assert verify_run(run).trusted
    (run / "checkpoints" / "best" / "meta.json").write_text('{"step": 4}')
    assert verify_run(run).reason == "checkpoints/best/meta.json changed since it was signed"
    sign_run(run)  # torchwise re-signs after writing a checkpoint
    assert verify_run(run).trusted
    shutil.rmtree(run / "checkpoints" / "best")
    assert verify_run(run).reason == "checkpoints/best/meta.json changed since it was signed"


def test_tampered_config_under_an_untouched_signature(key_dir, tmp_path):
    run = make_run(tmp_path / "run")
    sign_run(run)
    (run / "config.yaml").write_text("model: {target: 'subprocess:run'}\n")
    verdict = verify_run(run)
    assert not verdict.trusted and verdict.reason == "config.yaml changed since it was signed"


def test_a_signature_copied_from_another_folder_does_not_transfer(key_dir, tmp_path):
    mine = make_run(tmp_path / "mine")
    sign_run(mine)
    hostile = make_run(tmp_path / "hostile", config="model: {target: 'my_model:Net'}\n")
    shutil.copy(mine / SIGNATURE_FILE, hostile / SIGNATURE_FILE)
    assert verify_run(hostile).reason == "config.yaml changed since it was signed"


def test_an_edited_signature_and_another_users_key(key_dir, tmp_path, monkeypatch):
    run = make_run(tmp_path / "run")
    sign_run(run)
    document = json.loads((run / SIGNATURE_FILE).read_text())
    document["files"]["config.yaml"] = "0" * 64  # only a record for messages: the MAC is over the real files
    (run / SIGNATURE_FILE).write_text(json.dumps(document))
    assert verify_run(run).trusted
    document["hmac"] = "0" * 64
    (run / SIGNATURE_FILE).write_text(json.dumps(document))
    assert verify_run(run).reason == "its signature.json was edited"
    sign_run(run)
    monkeypatch.setenv("TORCHWISE_CONFIG_DIR", str(tmp_path / "someone-else"))
    user_key()
    assert verify_run(run).reason == "it was signed by another account or machine"
    (run / SIGNATURE_FILE).write_text("{not json")
    assert verify_run(run).reason == "its signature.json is unreadable"


def test_code_targets_lists_every_section_and_skips_what_the_caller_supplies(tmp_path):
    from torchwise.config import load_config

    (tmp_path / "my_model.py").write_text("raise SystemExit('imported')\n")
    config = load_config(None, base={
        "model": {"name": None, "target": "my_model:Net"}, "data": {"source": "target", "target": "subprocess:run"},
        "task": {"loss": "my_model:loss", "metrics": {"acc": "json:dumps"}}, "optim": {"target": "os:system"},
        "schedule": {"target": "pty:spawn"}, "base_dir": str(tmp_path)})
    found = {item.key: (item.target, item.origin) for item in code_targets(config)}
    assert list(found) == ["data.target", "model.target", "task.loss.target", "task.metrics.acc.target",
                           "optim.target", "schedule.target"]
    assert found["model.target"][1].files == (tmp_path / "my_model.py",)
    assert found["data.target"][1].files[-1].name == "subprocess.py"
    skipped = code_targets(config, skip=("model", "data", "optim"))
    assert [item.key for item in skipped] == ["task.loss.target", "task.metrics.acc.target", "schedule.target"]


def test_gate_passes_builtins_and_signed_folders_and_lists_the_rest(key_dir, tmp_path):
    from torchwise.config import load_config

    builtin = make_run(tmp_path / "digits")
    check_run_trust(builtin, load_config(None, base={"model": {"name": "mlp"}, "data": {"source": "digits"}}))
    hostile = make_run(tmp_path / "hostile")
    (hostile / "my_model.py").write_text("open('marker', 'w')\n")
    config = load_config(None, base={"model": {"target": "my_model:Net"}, "task": {"loss": "subprocess:run"},
                                     "base_dir": str(hostile)})
    with pytest.raises(UntrustedCodeError) as caught:
        check_run_trust(hostile, config)
    message = caught.value.message
    assert message.startswith(f"{hostile} is not a run you wrote (it has no signature, so it was not written "
                              "by torchwise on this account), and opening it would import code it names:\n")
    assert f"  model.target      my_model:Net    ->  imports my_model from {hostile / 'my_model.py'}\n" in message
    assert "  task.loss.target  subprocess:run  ->  imports subprocess from /" in message
    assert message.endswith(f"  and puts its base_dir {hostile} first on sys.path while importing them")
    assert caught.value.hint == (
        f"read that code first; to accept it, add --trust-code (Python: trust_code=True), or run "
        f"`torchwise trust {hostile}` to sign the folder as yours")
    assert caught.value.exit_code == 2
    check_run_trust(hostile, config, trust_code=True)
    sign_run(hostile)
    check_run_trust(hostile, config)
    assert not (tmp_path / "marker").exists() and "my_model" not in __import__("sys").modules


def test_artefacts_that_can_run_code_need_your_signature(key_dir, tmp_path):
    import torch

    from torchwise.export.exporter import export_module
    from torchwise.export.loading import load_predictor
    from torchwise.runs.trust import artefact_signature, check_artefact_trust

    result = export_module(torch.nn.Linear(3, 2), torch.randn(4, 3), fmt="torchscript", out=tmp_path / "m.pt")
    assert load_predictor(result.path).output_names  # exported here: loads with no flag
    shared = tmp_path / "shared"
    shared.mkdir()
    for path in (result.path, result.manifest_path):
        shutil.copy(path, shared / path.name)
    with pytest.raises(UntrustedCodeError) as caught:
        load_predictor(shared / "m.pt")
    assert caught.value.message == (
        f"{shared / 'm.pt'} is not an artefact you exported (it has no signature, so it was not written by "
        "torchwise on this account), and loading it can run code it carries: a TorchScript model is a program "
        "and torch.jit.load has no safe mode")
    assert load_predictor(shared / "m.pt", trust_code=True).output_names
    shutil.copy(artefact_signature(result.path), artefact_signature(shared / "m.pt"))
    load_predictor(shared / "m.pt")  # the same bytes, signed by you: a moved copy stays yours
    (shared / "m.pt.json").write_text((shared / "m.pt.json").read_text().replace('"format"', '"format" ', 1))
    with pytest.raises(UntrustedCodeError, match=r"\(m.pt.json changed since it was signed\)"):
        load_predictor(shared / "m.pt")
    check_artefact_trust(shared / "m.onnx", fmt="onnx")  # ONNX runs no Python: no signature needed


def test_a_run_that_cannot_be_signed_still_trains(tmp_path):
    import subprocess
    import sys

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")  # the key's folder cannot be made here (a read-only home, say)
    config = tmp_path / "line.yaml"
    config.write_text("data: {source: synthetic-regression, kwargs: {n: 64}}\nmodel: {name: linear}\n"
                      "task: {type: regression}\ntrain: {epochs: 1}\nlog: {progress: 'off'}\n")
    out = subprocess.run([sys.executable, "-m", "torchwise", "train", str(config), "--run-dir",
                          str(tmp_path / "runs"), "-q"], capture_output=True, text=True,
                         env={**os.environ, "TORCHWISE_CONFIG_DIR": str(blocked)})
    assert out.returncode == 0, out.stderr
    run = tmp_path / "runs" / "line"
    assert out.stderr.count(f"warning: {run} is not signed as yours (") == 1
    assert not (run / SIGNATURE_FILE).exists()
