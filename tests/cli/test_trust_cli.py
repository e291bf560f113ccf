"""`torchwise trust RUN_DIR`: prints what the folder would import, signs only on a yes."""

from __future__ import annotations

import subprocess
import sys

from torchwise.runs.trust import sign_run, verify_run


def trust(run_dir, *args, answer=""):
    return subprocess.run([sys.executable, "-m", "torchwise", "trust", str(run_dir), *args], input=answer,
                          capture_output=True, text=True)


def foreign_run(tmp_path):
    run = tmp_path / "shared-run"
    run.mkdir()
    (run / "my_model.py").write_text(f"open({str(tmp_path / 'marker')!r}, 'w')\n")
    (run / "config.yaml").write_text(f"model: {{target: 'my_model:Net'}}\nbase_dir: {run}\n")
    return run


def test_trust_shows_the_list_and_signs_on_yes(tmp_path):
    run = foreign_run(tmp_path)
    out = trust(run, answer="y\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:4] == [
        f"{run} is not signed by you: it has no signature, so it was not written by torchwise on this account.",
        "Opening it imports code it names:",
        f"  model.target  my_model:Net  ->  imports my_model from {run / 'my_model.py'}",
        f"  and puts its base_dir {run} first on sys.path while importing them",
    ]
    assert out.stdout.splitlines()[-1] == (f"Sign {run} as yours, so that torchwise runs this code without "
                                           f"asking? [y/N]: signed {run}")
    assert verify_run(run).trusted and not (tmp_path / "marker").exists()
    again = trust(run)
    assert again.stdout == f"{run} is signed by you already; nothing to do\n"


def test_trust_declined_signs_nothing(tmp_path):
    run = foreign_run(tmp_path)
    out = trust(run, answer="n\n")
    assert out.returncode == 1 and out.stdout.endswith("[y/N]: not signed\n")
    assert not verify_run(run).trusted and not (run / "signature.json").exists()


def test_trust_of_a_builtin_run_says_it_imports_nothing(tmp_path):
    run = tmp_path / "digits"
    run.mkdir()
    (run / "config.yaml").write_text("model: {name: mlp}\ndata: {source: digits}\n")
    out = trust(run, "--yes")
    assert out.returncode == 0
    assert "Its config names only torchwise built-ins: opening it imports no code of its own." in out.stdout
    sign_run(run)
    assert verify_run(run).trusted


def test_trust_of_a_folder_that_is_not_a_run(tmp_path):
    out = trust(tmp_path)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [f"error: {tmp_path} is not a torchwise run folder (no config.yaml)",
                                       "hint: pass the folder a `torchwise train` run wrote, e.g. runs/digits"]


def test_trust_an_artefact(tmp_path):
    import shutil

    import torch

    from torchwise.export.exporter import export_module
    from torchwise.runs.trust import verify_artefact

    result = export_module(torch.nn.Linear(3, 2), torch.randn(4, 3), fmt="exported", out=tmp_path / "m.pt2")
    shared = tmp_path / "shared"
    shared.mkdir()
    for path in (result.path, result.manifest_path):
        shutil.copy(path, shared / path.name)
    out = trust(shared / "m.pt2", "--yes")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        f"{shared / 'm.pt2'} is not signed by you: it has no signature, so it was not written by torchwise on "
        "this account.",
        "Loading it can run code it carries: torch.export.load can fall back to unpickling what it carries.",
        f"signed {shared / 'm.pt2'}"]
    assert verify_artefact(shared / "m.pt2").trusted
