"""Opening a run folder you did not write runs no code you did not choose (issue 15).

Hostile folders (tests/hostile.py) go through every command that opens a run folder, in a fresh
process that records imports and spawned processes: each stops with exit 2 and the list of what it
would import, and the marker file their code would write never appears. The legitimate cases get
no friction: your own runs need no flag, a built-in run from elsewhere needs none, and a custom
model from elsewhere works with --trust-code or after `torchwise trust`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.hostile import LEGIT_MODULE, build_hostile, legit_config, open_in_fresh_process

from torchwise.cli import main
from torchwise.runs.trust import sign_run, verify_run

REASONS = {
    "subprocess_run": "it has no signature, so it was not written by torchwise on this account",
    "os_system": "it has no signature, so it was not written by torchwise on this account",
    "base_dir_module": "it has no signature, so it was not written by torchwise on this account",
    "tampered": "config.yaml changed since it was signed",
    "copied_signature": "config.yaml changed since it was signed",
}


def cli(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stop:
        main(list(args))
    return stop.value.code, capsys.readouterr().err


@pytest.fixture(scope="module")
def legit_run(tmp_path_factory) -> Path:
    """A custom-model run this user trained here (so it is signed with the session's key)."""
    root = tmp_path_factory.mktemp("legit")
    config = legit_config(root / "project")
    with pytest.raises(SystemExit) as stop:
        main(["train", str(config), "--run-dir", str(root / "runs"), "-q"])
    assert stop.value.code == 0
    run = root / "runs" / "legit"
    assert verify_run(run).trusted
    return run


@pytest.fixture(scope="module")
def hostile(legit_run, tmp_path_factory) -> tuple[dict[str, Path], Path]:
    root = tmp_path_factory.mktemp("hostile")
    marker = root / "marker"
    return build_hostile(legit_run, root, marker), marker


def signed_elsewhere(run: Path, tmp_path: Path) -> None:
    """Sign ``run`` with another account's key: what a folder shared by a colleague looks like."""
    own = os.environ["TORCHWISE_CONFIG_DIR"]
    os.environ["TORCHWISE_CONFIG_DIR"] = str(tmp_path / "colleague")
    try:
        sign_run(run)
    finally:
        os.environ["TORCHWISE_CONFIG_DIR"] = own
    assert verify_run(run).reason == "it was signed by another account or machine"


def assert_stopped_with_the_list(outcome, folder: Path, reason: str, marker: Path) -> None:
    assert outcome.code == 2, outcome.stderr
    lines = outcome.stderr.splitlines()
    assert lines[0] == (f"error: {folder} is not a run you wrote ({reason}), and opening it would import "
                        "code it names:")
    assert any(" ->  imports " in line for line in lines[1:-1]), lines
    assert lines[-1] == (f"hint: read that code first; to accept it, add --trust-code (Python: trust_code=True), "
                         f"or run `torchwise trust {folder}` to sign the folder as yours")
    assert outcome.user_imports == [] and outcome.spawned == []
    assert not marker.exists()


def test_resume_stops_every_hostile_folder_before_any_code(hostile):
    folders, marker = hostile
    outcomes = open_in_fresh_process([("cli", ["resume", str(folder), "-q"]) for folder in folders.values()])
    for (name, folder), outcome in zip(folders.items(), outcomes, strict=True):
        assert_stopped_with_the_list(outcome, folder, REASONS[name], marker)
    base_dir = folders["base_dir_module"]
    expected = [f"  model.target      {'tw_hostile_model:Net':<25}  ->  imports tw_hostile_model from "
                f"{marker.parent / 'payload' / 'tw_hostile_model.py'}",
                f"  task.loss.target  tw_hostile_pkg.models:Net  ->  imports tw_hostile_pkg.models from "
                f"{marker.parent / 'payload' / 'tw_hostile_pkg' / 'models.py'} (after 1 package __init__ file "
                "above it)",
                f"  and puts its base_dir {marker.parent / 'payload'} first on sys.path while importing them"]
    assert outcomes[list(folders).index("base_dir_module")].stderr.splitlines()[1:4] == expected, base_dir
    assert "  model.target  subprocess:run  ->  imports subprocess from /" in outcomes[0].stderr


def test_python_resume_stops_too(hostile, tmp_path):
    folders, marker = hostile
    folder = tmp_path / "copied_signature"
    shutil.copytree(folders["copied_signature"], folder, symlinks=True)
    source = (f"import torch, torchwise\n"
              f"torchwise.fit(torch.nn.Linear(1, 1), torch.utils.data.TensorDataset(torch.zeros(4, 1), "
              f"torch.zeros(4, 1)), resume={str(folder)!r}, quiet=True)")
    # fit passes its own model: the copied folder's model.target is not imported, so edit the loss.
    config = (folder / "config.yaml").read_text().replace("loss: null", "loss: tw_hostile_model:loss")
    (folder / "config.yaml").write_text(config)
    (outcome,) = open_in_fresh_process([("python", source)])
    assert_stopped_with_the_list(outcome, folder, REASONS["copied_signature"], marker)
    assert "  task.loss.target  tw_hostile_model:loss  ->  imports tw_hostile_model from " in outcome.stderr


def test_own_run_resumes_with_no_flag_even_moved(legit_run, tmp_path, capsys):
    moved = tmp_path / "moved"
    shutil.copytree(legit_run, moved, symlinks=True)
    code, err = cli(capsys, "resume", str(moved), "-q", "train.epochs=3")
    assert code == 0, err
    assert verify_run(moved).trusted  # re-signed after its new checkpoints


def test_custom_model_from_elsewhere_needs_consent_then_works(legit_run, tmp_path, capsys):
    shared = tmp_path / "shared"
    shutil.copytree(legit_run, shared, symlinks=True)
    signed_elsewhere(shared, tmp_path)
    code, err = cli(capsys, "resume", str(shared), "-q", "train.epochs=3")
    project = Path(legit_run).parents[1] / "project"
    assert code == 2
    assert f"  model.target  {LEGIT_MODULE}:Net  ->  imports {LEGIT_MODULE} from {project / 'tw_legit_model.py'}" \
        in err
    code, err = cli(capsys, "resume", str(shared), "-q", "train.epochs=3", "--trust-code")
    assert code == 0, err
    assert verify_run(shared).trusted  # what you resumed with consent is yours from now on


def test_trust_command_then_resume_with_no_flag(legit_run, tmp_path, capsys, monkeypatch):
    shared = tmp_path / "shared"
    shutil.copytree(legit_run, shared, symlinks=True)
    signed_elsewhere(shared, tmp_path)
    code, _ = cli(capsys, "trust", str(shared), "--yes")
    assert code == 0
    code, err = cli(capsys, "resume", str(shared), "-q", "train.epochs=3")
    assert code == 0, err


def test_builtin_run_from_elsewhere_needs_no_flag(tmp_path, capsys):
    config = tmp_path / "digits.yaml"
    config.write_text("name: digits\ndata: {source: digits}\nmodel: {name: mlp}\ntrain: {epochs: 1}\n")
    code, err = cli(capsys, "train", str(config), "--run-dir", str(tmp_path / "runs"), "-q")
    assert code == 0, err
    run = tmp_path / "runs" / "digits"
    signed_elsewhere(run, tmp_path)
    code, err = cli(capsys, "resume", str(run), "-q", "train.epochs=2")
    assert code == 0, err


def test_resume_checks_the_config_hash_before_importing_anything(legit_run, tmp_path, capsys):
    """Even with --trust-code, a config that no longer matches the checkpoint stops before any import."""
    changed = tmp_path / "changed"
    shutil.copytree(legit_run, changed, symlinks=True)
    marker = tmp_path / "marker"
    from tests.hostile import write_marker_module

    write_marker_module(tmp_path / "payload", marker)
    text = (changed / "config.yaml").read_text().replace(f"{LEGIT_MODULE}:Net", "tw_hostile_model:Net")
    text = text.replace(f"base_dir: {legit_run.parents[1] / 'project'}", f"base_dir: {tmp_path / 'payload'}")
    (changed / "config.yaml").write_text(text)
    (outcome,) = open_in_fresh_process([("cli", ["resume", str(changed), "-q", "--trust-code"])])
    assert outcome.code == 2
    assert outcome.stderr.splitlines()[0] == "error: the run's config changed since the checkpoint (model.target)"
    assert outcome.user_imports == [] and not marker.exists()


def test_load_model_stops_every_hostile_folder_before_any_code(hostile):
    folders, marker = hostile
    calls = [("python", f"import torchwise; torchwise.load_model({str(folder)!r})") for folder in folders.values()]
    for (name, folder), outcome in zip(folders.items(), open_in_fresh_process(calls), strict=True):
        assert_stopped_with_the_list(outcome, folder, REASONS[name], marker)
        # load_model builds the model alone: only model.target is listed (the data target of
        # `os_system` would not be imported, so it is not asked about).
        assert "data.target" not in outcome.stderr and "model.target" in outcome.stderr


def test_load_model_of_own_foreign_and_builtin_runs(legit_run, tmp_path, capsys):
    import torchwise
    from torchwise.errors import UntrustedCodeError

    assert not torchwise.load_model(legit_run).training  # yours: no flag
    shared = tmp_path / "shared"
    shutil.copytree(legit_run, shared, symlinks=True)
    signed_elsewhere(shared, tmp_path)
    with pytest.raises(UntrustedCodeError):
        torchwise.load_model(shared)
    model = torchwise.load_model(shared, trust_code=True)
    assert type(model).__module__ == LEGIT_MODULE
    config = tmp_path / "digits.yaml"
    config.write_text("name: digits\ndata: {source: digits}\nmodel: {name: mlp}\ntrain: {epochs: 1}\n")
    code, err = cli(capsys, "train", str(config), "--run-dir", str(tmp_path / "runs"), "-q")
    assert code == 0, err
    signed_elsewhere(tmp_path / "runs" / "digits", tmp_path)
    assert torchwise.load_model(tmp_path / "runs" / "digits").head.out_features == 10  # built-in: no flag


def test_readers_import_no_code_of_any_hostile_folder(hostile, tmp_path):
    """runs, runs compare, diagnose and report need no code: they succeed on every hostile folder
    and import none of it, start no process, write no marker."""
    folders, marker = hostile
    root = next(iter(folders.values())).parent
    calls = [("cli", ["runs", str(root)]), ("cli", ["runs", "compare", *map(str, folders.values()),
                                                     "--png", str(tmp_path / "compare.png")])]
    calls += [("cli", ["diagnose", str(folder)]) for folder in folders.values()]
    calls += [("cli", ["report", str(folder), "--out", str(tmp_path / f"{name}.html")])
              for name, folder in folders.items()]
    for call, outcome in zip(calls, open_in_fresh_process(calls), strict=True):
        assert outcome.code in (0, 1), (call, outcome.stderr)  # diagnose exits 1 on a finding
        assert outcome.user_imports == [] and outcome.spawned == [], call
    assert not marker.exists()


def test_export_and_predict_stop_every_hostile_folder_before_any_code(hostile, tmp_path):
    """The two commands that build a run's model from its folder stop first, with the list."""
    folders, marker = hostile
    inputs = tmp_path / "new.csv"
    inputs.write_text("x\n0.5\n1.5\n")
    calls = [("cli", ["export", str(folder), "--format", "exported", "--out", str(tmp_path / name)])
             for name, folder in folders.items()]
    calls += [("cli", ["predict", str(folder), str(inputs)]) for folder in folders.values()]
    outcomes = open_in_fresh_process(calls)
    for (name, folder), outcome in zip([*folders.items(), *folders.items()], outcomes, strict=True):
        assert_stopped_with_the_list(outcome, folder, REASONS[name], marker)
    assert not any((tmp_path / name).exists() for name in folders)  # nothing exported
