"""A save that dies at any step leaves the old or the new checkpoint, and nothing else for long."""

from __future__ import annotations

import itertools
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from torchwise.checkpoints import checkpoint_folder, meta_file
from torchwise.checkpoints.checkpoint import (
    cleanup_stale,
    delete_checkpoint,
    find_checkpoint,
    load_checkpoint,
    save_checkpoint,
    verify_checkpoint,
)
from torchwise.errors import CheckpointError

# Every filesystem call whose order makes the guarantee.
DURABILITY_CALLS = ("fsync", "rename", "replace", "symlink")


class Crash(BaseException):
    """Stands for the process dying: no handler for Exception runs after it."""


def fail_at_call(monkeypatch: pytest.MonkeyPatch, k: int, error: BaseException) -> None:
    counter = itertools.count(1)
    for name in DURABILITY_CALLS:
        real = getattr(os, name)

        def failing(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            if next(counter) == k:
                raise error
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, failing)


def save(directory: Path, step: int) -> None:
    save_checkpoint(
        directory,
        model_state={"w": torch.full((3,), float(step))},
        training_state={"step": step, "momentum": torch.full((2,), float(step))},
        meta={"step": step},
    )


def hidden(folder: Path) -> list[str]:
    return sorted(entry.name for entry in folder.iterdir() if entry.name.startswith("."))


def start(root: Path, how: str) -> Path:
    last = root / "last"
    if how == "link":
        save(last, 1)
    elif how == "plain":  # a run copied with cp -rL: a plain folder where the link was
        save(root / "elsewhere" / "last", 1)
        shutil.copytree(find_checkpoint(root / "elsewhere" / "last"), last)
        shutil.rmtree(root / "elsewhere")
    return last


@pytest.mark.parametrize("hard", [True, False], ids=["killed", "os-error"])
@pytest.mark.parametrize("before", ["none", "link", "plain"])
def test_a_failure_at_every_step_leaves_the_old_or_the_new_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hard: bool, before: str
) -> None:
    for k in itertools.count(1):
        root = tmp_path / f"crash-at-{k}"
        last = start(root, before)
        with monkeypatch.context() as patch:
            if hard:  # a killed process runs no clean-up
                fail_at_call(patch, k, Crash())
                patch.setattr(checkpoint_folder, "discard_leftovers", lambda *args: None)
            else:
                fail_at_call(patch, k, OSError(28, "No space left on device"))
            try:
                save(last, 2)
                completed = True
            except (Crash, CheckpointError):
                completed = False

        steps = {2} if completed else ({2} if before == "none" else {1, 2})
        if find_checkpoint(last) is None:
            assert before == "none" and not completed
        else:
            verify_checkpoint(last)
            assert load_checkpoint(last).training_state["step"] in steps
        if not hard:  # a failed save removes what it wrote; where the fsync after the swap
            # failed, the previous folder stays, since the swap may not be durable yet
            assert all(".ckpt-" in name for name in hidden(root)) and len(hidden(root)) <= 2
        with monkeypatch.context() as patch:  # a later process cleans up after the dead one
            patch.setattr(checkpoint_folder, "_pid_alive", lambda pid: False)
            cleanup_stale(root)
        if find_checkpoint(last) is not None:
            assert load_checkpoint(last).training_state["step"] in steps
            plain = last.is_dir() and not last.is_symlink()
            assert len(hidden(root)) == (0 if plain else 1)  # only the checkpoint itself
        else:
            assert hidden(root) == []
        if completed:
            break
    # 3 files + the folder fsynced, rename, fsync, symlink, replace, fsync (+ a rename for plain)
    assert k - 1 == (10 if before == "plain" else 9)


def test_loading_recovers_a_checkpoint_left_without_its_link(tmp_path: Path) -> None:
    save(tmp_path / "last", 1)
    (tmp_path / "last").unlink()  # as after a crash between the rename and the swap
    assert load_checkpoint(tmp_path / "last").training_state["step"] == 1
    save(tmp_path / "last", 2)
    assert load_checkpoint(tmp_path / "last").training_state["step"] == 2


def test_a_link_to_a_deleted_folder_is_an_error_not_a_fresh_start(tmp_path: Path) -> None:
    save(tmp_path / "last", 1)
    shutil.rmtree(find_checkpoint(tmp_path / "last"))
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "last")


def test_a_plain_folder_that_is_not_a_checkpoint_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "last").mkdir()
    (tmp_path / "last" / "notes.txt").write_text("mine")
    with pytest.raises(CheckpointError, match="not a torchwise checkpoint"):
        save(tmp_path / "last", 1)
    assert (tmp_path / "last" / "notes.txt").read_text() == "mine"
    assert hidden(tmp_path) == []


def test_a_file_where_the_checkpoint_goes_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "last").write_text("mine")
    with pytest.raises(CheckpointError, match="is a file"):
        save(tmp_path / "last", 1)
    assert (tmp_path / "last").read_text() == "mine"
    assert hidden(tmp_path) == []


def dead_pid() -> int:
    process = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(process.stdout)


def test_cleanup_removes_only_what_dead_writers_left(tmp_path: Path) -> None:
    save(tmp_path / "last", 1)
    current = find_checkpoint(tmp_path / "last").name
    dead, alive = dead_pid(), os.getpid()
    for name in (f".last.tmp-{dead}-ab12", f".last.tmp-{alive}-ab12", ".unrelated", "keep"):
        (tmp_path / name).mkdir()
    for name in (f".last.ckpt-{dead}-ef56", f".other.ckpt-{dead}-0a0a"):
        shutil.copytree(tmp_path / current, tmp_path / name)
    os.symlink(current, tmp_path / f".last.link-{dead}-cd34")
    removed = cleanup_stale(tmp_path)
    assert sorted(p.name for p in removed) == [
        f".last.ckpt-{dead}-ef56",
        f".last.link-{dead}-cd34",
        f".last.tmp-{dead}-ab12",
    ]
    # `.other` has no link: its ckpt folder may be the only copy of that checkpoint.
    assert hidden(tmp_path) == sorted(
        [current, f".last.tmp-{alive}-ab12", f".other.ckpt-{dead}-0a0a", ".unrelated"]
    )
    assert load_checkpoint(tmp_path / "last").training_state["step"] == 1


WRITER = textwrap.dedent(
    """
    import sys, torch
    from pathlib import Path
    from torchwise.checkpoints.checkpoint import save_checkpoint
    weights = {f"layer{i}": torch.randn(256, 1024) for i in range(4)}  # 4 MiB a save
    for step in range(1, 10**6):
        save_checkpoint(Path(sys.argv[1]), model_state=weights,
                        training_state={"step": step}, meta={"step": step})
        print(step, flush=True)
    """
)


@pytest.mark.slow
def test_killing_a_writer_at_random_moments_never_breaks_the_checkpoint(tmp_path: Path) -> None:
    last = tmp_path / "last"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    rng = random.Random(0)
    for _ in range(4):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(last)], env=env, stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None
        writer.stdout.readline()  # one save done: the kill lands in a later one
        time.sleep(rng.uniform(0.0, 0.3))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        verify_checkpoint(last)
        assert load_checkpoint(last).training_state["step"] >= 1
        cleanup_stale(tmp_path)
        assert len(hidden(tmp_path)) == 1


def test_delete_removes_link_and_folder_and_survives_a_crash_part_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save(tmp_path / "step-1", 1)
    delete_checkpoint(tmp_path / "step-1")
    assert find_checkpoint(tmp_path / "step-1") is None and list(tmp_path.iterdir()) == []

    save(tmp_path / "step-2", 2)
    with monkeypatch.context() as patch:  # killed right after the folder was renamed away
        patch.setattr(Path, "unlink", lambda self, missing_ok=False: (_ for _ in ()).throw(Crash()))
        patch.setattr(checkpoint_folder.shutil, "rmtree", lambda *args, **kwargs: None)
        with pytest.raises(Crash):
            delete_checkpoint(tmp_path / "step-2")
    with pytest.raises(CheckpointError, match="does not exist"):  # never a half-deleted load
        load_checkpoint(tmp_path / "step-2")
    delete_checkpoint(tmp_path / "step-2")  # the caller's next pass finishes it
    with monkeypatch.context() as patch:
        patch.setattr(checkpoint_folder, "_pid_alive", lambda pid: False)
        cleanup_stale(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_delete_also_removes_a_plain_folder_and_unlinked_leftovers(tmp_path: Path) -> None:
    save(tmp_path / "elsewhere" / "last", 1)
    shutil.copytree(find_checkpoint(tmp_path / "elsewhere" / "last"), tmp_path / "plain")
    delete_checkpoint(tmp_path / "plain")
    save(tmp_path / "last", 1)
    (tmp_path / "last").unlink()  # as after a crash before the first swap
    delete_checkpoint(tmp_path / "last")
    assert find_checkpoint(tmp_path / "last") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere"]


def test_a_reader_racing_a_writer_reads_the_new_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save(tmp_path / "last", 1)
    real_hash = meta_file.sha256_file
    calls = []

    def hash_while_a_writer_swaps(path: Path) -> str:
        if not calls:
            save(tmp_path / "last", 2)  # swaps in step 2 and deletes the folder being read
        calls.append(path)
        return real_hash(path)

    monkeypatch.setattr(meta_file, "sha256_file", hash_while_a_writer_swaps)
    assert load_checkpoint(tmp_path / "last").training_state["step"] == 2
