"""The bench for hostile-folder attacks (issue 20): a real run folder to spoil, a victim outside it,
and a fresh `torchwise` process run under limits.

Each attack copies one real, signed run into a scratch folder, spoils it one way, and runs one
command on it in a new process with ``RLIMIT_AS`` = 1 GiB and ``RLIMIT_CPU`` = 10 s (a command
that allocates what a bomb asks for dies of MemoryError; one that spins dies of SIGXCPU), and a
wall-clock guard (a FIFO hang uses no CPU, so the guard is what catches it; it is generous so a
busy machine does not fail a test that would pass, and a hang is a failure, never a wait).
`Bench.assert_untouched` then checks that no file outside the scratch run folder changed (the
victim folder the links point at, the original run, this user's key folder) and that the marker
the payload code would write never appeared.
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from tests.hostile import LEGIT_SOURCE

MEMORY_LIMIT = 1 << 30
CPU_SECONDS = 10
WALL_GUARD_SECONDS = 60
PAYLOAD_MODULE = "tw_attack_payload"


@cache
def base_run() -> Path:
    """A real run this test session trained (so it is signed with the session's key): a built-in
    linear model on synthetic regression data, one epoch, checkpoints last and best."""
    import tempfile

    from torchwise.cli import main

    root = Path(tempfile.mkdtemp(prefix="tw-hostile-base-"))
    config = root / "line.yaml"
    config.write_text(yaml.safe_dump({
        "name": "line", "data": {"source": "synthetic-regression", "kwargs": {"n": 64}},
        "model": {"name": "linear"}, "task": {"type": "regression"},
        "train": {"epochs": 1, "batch_size": 16}, "log": {"progress": "off"}}))
    try:
        main(["train", str(config), "--run-dir", str(root / "runs"), "-q"])
    except SystemExit as stop:
        assert stop.code == 0, stop.code
    return root / "runs" / "line"


@cache
def foreign_model_run() -> Path:
    """A run of a custom model (``tw_attack_payload:Net``, harmless when it trained) written and
    signed by ANOTHER account: what a colleague's shared folder looks like. Its attack swaps the
    module for the payload by pointing ``base_dir`` elsewhere (base_dir is not in the config hash)."""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="tw-hostile-foreign-"))
    project = root / "project"
    project.mkdir()
    (project / f"{PAYLOAD_MODULE}.py").write_text(LEGIT_SOURCE)  # a Linear(1, 1) as `linear`
    config = project / "net.yaml"
    config.write_text(yaml.safe_dump({
        "name": "net", "data": {"source": "synthetic-regression", "kwargs": {"n": 64}},
        "model": {"name": None, "target": f"{PAYLOAD_MODULE}:Net"}, "task": {"type": "regression"},
        "train": {"epochs": 1, "batch_size": 16}, "log": {"progress": "off"}}))
    out = subprocess.run([sys.executable, "-m", "torchwise", "train", str(config), "--run-dir", str(root / "runs"),
                          "-q"], capture_output=True, text=True, env={**os.environ, "TORCHWISE_CONFIG_DIR":
                                                                      str(root / "colleague-key")})
    assert out.returncode == 0, out.stderr[-2000:]
    return root / "runs" / "net"


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


class Bench:
    """One attack's scratch: ``run`` (the copy to spoil), ``outside`` (what the links point at,
    holding a victim file and a victim folder), ``marker`` (what the payload code writes)."""

    def __init__(self, tmp_path: Path, source: Path | None = None) -> None:
        self.root = tmp_path
        self.run = tmp_path / "run"
        shutil.copytree(source or base_run(), self.run, symlinks=True)
        self.outside = tmp_path / "outside"
        (self.outside / "victim-folder").mkdir(parents=True)
        (self.outside / "victim.txt").write_text("the user's own file\n")
        (self.outside / "victim-folder" / "kept.txt").write_text("kept\n")
        self.marker = self.outside / "marker"
        payload = self.outside / "payload"
        payload.mkdir()
        (payload / f"{PAYLOAD_MODULE}.py").write_text(
            f"open({str(self.marker)!r}, 'a').write('imported\\n')\n"
            "def metric(output, target):\n    return 0.0\n"
            "def Net(*args, **kwargs):\n    raise SystemExit('payload ran')\n")
        self.payload = payload
        self._before = self._fingerprint()

    def settle(self) -> None:
        """Take the outside's fingerprint again, after a test planted more there."""
        self._before = self._fingerprint()

    def link(self, name: str, target: Path) -> Path:
        """Replace ``run/name`` with a symbolic link to ``target``."""
        path = self.run / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.symlink_to(target)
        return path

    @property
    def last(self) -> Path:
        """The hidden folder `checkpoints/last` points to (where the tensor files are)."""
        return self.run / "checkpoints" / os.readlink(self.run / "checkpoints" / "last")

    def config(self) -> dict:
        return yaml.safe_load((self.run / "config.yaml").read_text())

    def write_config(self, config: dict) -> None:
        (self.run / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))

    def torchwise(self, *args: str) -> Outcome:
        """``python -m torchwise ARGS`` in a new process under the limits, from the scratch folder."""
        try:
            out = subprocess.run([sys.executable, "-m", "torchwise", *args], cwd=self.root, capture_output=True,
                                 text=True, timeout=WALL_GUARD_SECONDS, preexec_fn=_limits,
                                 env={**os.environ, "COLUMNS": "200"})
        except subprocess.TimeoutExpired:
            raise AssertionError(f"torchwise {' '.join(args)} hung (no end after {WALL_GUARD_SECONDS} s)") from None
        return Outcome(out.returncode, out.stdout, out.stderr)

    def python(self, source: str) -> Outcome:
        """Python ``source`` in a new process under the same limits."""
        try:
            out = subprocess.run([sys.executable, "-c", source], cwd=self.root, capture_output=True, text=True,
                                 timeout=WALL_GUARD_SECONDS, preexec_fn=_limits)
        except subprocess.TimeoutExpired:
            raise AssertionError("the Python call hung") from None
        return Outcome(out.returncode, out.stdout, out.stderr)

    def refused(self, outcome: Outcome, error: str, hint: str) -> None:
        """The command stopped with exactly this error and hint (exit 2), touched nothing outside
        the scratch run, and ran none of the payload."""
        assert outcome.code == 2, (outcome.code, outcome.stderr[-2000:])
        assert outcome.stderr.endswith(f"error: {error}\nhint: {hint}\n"), outcome.stderr[-2000:]
        self.assert_untouched()

    def assert_untouched(self) -> None:
        assert not self.marker.exists(), "the payload ran"
        assert self._fingerprint() == self._before, "a file outside the scratch run folder changed"

    def _fingerprint(self) -> dict[str, tuple]:
        seen = {}
        for top in (self.outside, base_run(), Path(os.environ["TORCHWISE_CONFIG_DIR"])):
            for path in sorted(top.rglob("*")):
                info = path.lstat()
                digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() \
                    else None
                seen[str(path)] = (info.st_mode, info.st_size, info.st_mtime_ns, digest)
        return seen


HINT_FOLDER = "restore the file from the run's owner, or remove it; a folder someone sent you may be hostile"
HINT_CORRUPT_PREFIX = "the checkpoint is damaged"
