"""Hostile run folders, and a way to open them in a fresh process that records what code ran.

Every command that opens a run folder is tested against the same folders (tests/runs/
test_hostile_folders.py). A reader (`runs`, `diagnose`, `report`) must import no user code at all:
`open_in_fresh_process` reports every module imported and every process started, so such a test
is `assert outcome.user_imports == [] and outcome.spawned == []` on the folders of `build_hostile`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import yaml

# Modules the hostile folders name; none of them may ever be imported.
HOSTILE_MODULES = ("tw_hostile_model", "tw_hostile_pkg")
LEGIT_MODULE = "tw_legit_model"

LEGIT_SOURCE = """
from torch import nn


class Net(nn.Module):
    # The user's own model: y = w*x + b.
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(1, 1)

    def forward(self, x):
        return self.linear(x)
"""


def legit_config(project: Path) -> Path:
    """A user's project: a model file beside a config that names it (a regression in 2 epochs)."""
    project.mkdir(parents=True, exist_ok=True)
    (project / f"{LEGIT_MODULE}.py").write_text(LEGIT_SOURCE)
    config = project / "legit.yaml"
    config.write_text(yaml.safe_dump({
        "name": "legit", "data": {"source": "synthetic-regression", "kwargs": {"n": 64}},
        "model": {"name": None, "target": f"{LEGIT_MODULE}:Net"}, "task": {"type": "regression"},
        "train": {"epochs": 2, "batch_size": 16}, "log": {"progress": "off"}}))
    return config


def write_marker_module(folder: Path, marker: Path) -> None:
    """`tw_hostile_model.py` and the package `tw_hostile_pkg`: importing either writes ``marker``."""
    folder.mkdir(parents=True, exist_ok=True)
    payload = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    (folder / f"{HOSTILE_MODULES[0]}.py").write_text(payload + "Net = object\n")
    package = folder / HOSTILE_MODULES[1]
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text(payload)
    (package / "models.py").write_text(payload + "Net = object\n")


def build_hostile(legit_run: Path, root: Path, marker: Path) -> dict[str, Path]:
    """Copies of a real run folder turned hostile, each a different way; ``marker`` is the file
    their code would write. ``legit_run`` must be signed by this user (written here)."""
    code_dir = root / "payload"
    write_marker_module(code_dir, marker)

    def variant(name: str, edit: dict) -> Path:
        folder = root / name
        shutil.copytree(legit_run, folder, symlinks=True)
        config = yaml.safe_load((folder / "config.yaml").read_text())
        for section, values in edit.items():
            if isinstance(values, dict) and isinstance(config.get(section), dict):
                config[section].update(values)
            else:
                config[section] = values
        (folder / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        return folder

    touch = ["touch", str(marker)]
    folders = {
        # A callable that runs a program, with the program in kwargs; no signature at all.
        "subprocess_run": variant("subprocess_run", {"model": {"target": "subprocess:run",
                                                               "kwargs": {"args": touch}}}),
        # A built-in that runs a shell command, as the dataset factory.
        "os_system": variant("os_system", {"data": {"source": "target", "target": "os:system",
                                                    "kwargs": {"command": f"touch {marker}"}}}),
        # base_dir points at a folder whose module writes the marker on import (a package too).
        "base_dir_module": variant("base_dir_module", {"model": {"target": f"{HOSTILE_MODULES[0]}:Net"},
                                                       "task": {"loss": f"{HOSTILE_MODULES[1]}.models:Net"},
                                                       "base_dir": str(code_dir)}),
    }
    for name in ("subprocess_run", "os_system", "base_dir_module"):
        (folders[name] / "signature.json").unlink()
    # The user's own signed run with its config edited afterwards: the signature is untouched.
    folders["tampered"] = variant("tampered", {"model": {"target": f"{HOSTILE_MODULES[0]}:Net"},
                                               "base_dir": str(code_dir)})
    # A hostile folder carrying the signature of the user's own run, copied in.
    copied = variant("copied_signature", {"model": {"target": f"{HOSTILE_MODULES[0]}:Net"},
                                          "base_dir": str(code_dir)})
    shutil.copy(legit_run / "signature.json", copied / "signature.json")
    folders["copied_signature"] = copied
    return folders


@dataclass
class Outcome:
    """What one call did in the fresh process."""

    code: int
    stderr: str
    user_imports: list[str]
    spawned: list[str]


_DRIVER = textwrap.dedent("""
    import contextlib, io, json, sys
    calls, watched = json.loads(sys.argv[1]), tuple(json.loads(sys.argv[2]))
    imports, spawned = [], []

    def hook(event, args):
        if event == "import" and args[0].split(".")[0] in watched:
            imports.append(args[0])
        elif event in ("subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn", "os.fork"):
            spawned.append(event)

    sys.addaudithook(hook)
    from torchwise.cli import main, report_error
    from torchwise.errors import TorchwiseError
    results = []
    for call in calls:
        del imports[:], spawned[:]
        err = io.StringIO()
        code = 0
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                if call[0] == "cli":
                    main(call[1])
                else:
                    exec(call[1], {})
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else 1
            except TorchwiseError as error:
                report_error(error)
                code = error.exit_code
        results.append({"code": code, "stderr": err.getvalue(), "user_imports": list(imports),
                        "spawned": list(spawned)})
    print(json.dumps(results))
""")


def open_in_fresh_process(calls: list[tuple[str, list[str] | str]],
                          watched: tuple[str, ...] = HOSTILE_MODULES) -> list[Outcome]:
    """Run each call (``("cli", argv)`` or ``("python", source)``) in ONE new Python process with
    an audit hook; report its exit code, stderr, imports of ``watched`` modules and spawned processes."""
    out = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(calls), json.dumps(list(watched))],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return [Outcome(**item) for item in json.loads(out.stdout.splitlines()[-1])]
