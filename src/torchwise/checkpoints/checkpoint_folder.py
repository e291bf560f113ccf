"""The checkpoint folder on disk, swapped into place atomically.

On disk, ``checkpoints/last`` is a relative symlink to a hidden sibling folder::

    checkpoints/last -> .last.ckpt-<pid>-<token>
    checkpoints/.last.ckpt-<pid>-<token>/{model.safetensors,state.safetensors,meta.json}

Why a symlink: POSIX ``rename`` replaces a file or symlink atomically but refuses to replace a
non-empty folder, so swapping two folders by name needs two renames with an instant in
between where ``last`` does not exist. Replacing a symlink is one ``os.replace``: at every
instant ``last`` resolves to a complete, fsynced checkpoint, a reader never sees a gap, and a
crash can leave only unreferenced hidden folders behind, which `cleanup_stale` removes.
(A plain folder at ``last``, e.g. from copying a run with ``cp -rL``, is accepted and replaced
by the link on the next save; see `swap_in`.)
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path

from torchwise.errors import CheckpointError

# Written last into a checkpoint folder; a plain folder without it is not ours.
META_FILE = "meta.json"
# Our hidden siblings: tmp = being written, ckpt = complete, link = a symlink to swap in.
_ENTRY = re.compile(r"\.(?P<name>.+)\.(?P<kind>tmp|ckpt|link)-(?P<pid>\d+)-[0-9a-f]+\Z")


def staging_paths(directory: Path) -> tuple[Path, Path, Path]:
    """``(tmp, ckpt, link)`` siblings of ``directory`` for one save; the writer's pid in their
    names lets `cleanup_stale` tell a live writer's from a crashed one's."""
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    name = directory.name
    tmp, data, link = (
        directory.parent / f".{name}.{kind}-{token}" for kind in ("tmp", "ckpt", "link")
    )
    return tmp, data, link


def publish(tmp: Path, data: Path, link: Path, directory: Path) -> Path | None:
    """Make the complete, fsynced folder ``tmp`` the checkpoint at ``directory``; return the
    previous folder for the caller to delete once this returns."""
    # From here the folder is complete and durable; its ckpt name says so to find_checkpoint.
    os.rename(tmp, data)
    # The rename must be durable before the link to its new name can be.
    fsync_path(directory.parent)
    os.symlink(data.name, link)  # relative, so the run folder can be moved as a whole
    previous = swap_in(link, directory)
    fsync_path(directory.parent)  # makes the swap itself durable
    return previous


def find_checkpoint(directory: Path) -> Path | None:
    """The folder to read the checkpoint at ``directory`` from, or None where there is none.

    Normally the target of the ``directory`` link. Where there is no link (a crash during the
    very first save, or while a plain folder was being replaced by the link), the newest
    complete hidden ``.{name}.ckpt-*`` sibling is the checkpoint.

    >>> import tempfile
    >>> find_checkpoint(Path(tempfile.mkdtemp()) / "last") is None
    True
    """
    from torchwise.runs.safe_io import FolderFileError, sibling_link_target

    directory = Path(directory)
    if directory.parent.is_symlink():
        raise CheckpointError(f"{directory.parent} is a symbolic link; torchwise does not follow links in a run folder",
                              hint="restore the run's checkpoints folder; a folder someone sent you may be hostile")
    try:
        target = sibling_link_target(directory)
    except FolderFileError as error:
        raise CheckpointError(error.message, hint=error.hint) from None
    if target is not None and target.is_dir():
        return target.resolve()
    if target is None and directory.is_dir():
        return directory.resolve()
    if directory.exists():
        raise CheckpointError(
            f"{directory} is a file, not a checkpoint folder",
            hint="move it aside; a checkpoint is a folder",
        )
    parent, name = directory.parent, directory.name
    candidates = [
        entry
        for entry in (parent.iterdir() if parent.is_dir() else ())
        if (match := _ENTRY.match(entry.name))
        and match["name"] == name
        and match["kind"] == "ckpt"
        and (entry / META_FILE).is_file()
    ]
    if candidates:
        return max(candidates, key=lambda entry: (entry / META_FILE).stat().st_mtime_ns)
    if directory.is_symlink():
        raise CheckpointError(
            f"{directory} points to {os.readlink(directory)}, which does not exist",
            hint="its folder was deleted by hand; resume from checkpoints/best or start over",
        )
    return None


def cleanup_stale(parent: Path) -> list[Path]:
    """Remove what crashed writers left in ``parent``; return what was removed.

    Only our hidden siblings (``.{name}.tmp-``, ``.ckpt-``, ``.link-`` + writer pid), only
    those whose writer process is gone, and never the ``ckpt`` folder that `find_checkpoint`
    reads ``{name}`` from (without a link, that hidden folder is the checkpoint).
    Assumes one machine writes this folder, as in torchwise (rank 0 saves).

    >>> import tempfile
    >>> cleanup_stale(Path(tempfile.mkdtemp()))
    []
    """
    parent = Path(parent)
    removed = []
    for entry in sorted(parent.iterdir()) if parent.is_dir() else ():
        match = _ENTRY.match(entry.name)
        if match is None or _pid_alive(int(match["pid"])):
            continue
        if match["kind"] == "ckpt" and _is_current(entry, parent / match["name"]):
            continue
        if entry.is_symlink() or not entry.is_dir():
            entry.unlink()
        else:
            shutil.rmtree(entry)
        removed.append(entry)
    return removed


def delete_checkpoint(directory: Path) -> None:
    """Remove the checkpoint at ``directory`` (e.g. an old numbered one).

    Its folder is first renamed to a ``tmp`` name, so that a crash part-way leaves no
    half-deleted checkpoint that looks complete: only a link to nothing (which this function
    removes when called again) and a tmp folder that `cleanup_stale` removes.

    >>> import tempfile
    >>> delete_checkpoint(Path(tempfile.mkdtemp()) / "step-000000010")  # nothing there: no-op
    """
    directory = Path(directory)
    tmp = staging_paths(directory)[0]
    if directory.is_symlink():
        target = directory.parent / os.readlink(directory)
        match = _ENTRY.match(target.name)
        if (
            match
            and match["kind"] == "ckpt"
            and target.parent == directory.parent
            and target.is_dir()
        ):
            os.rename(target, tmp)
        directory.unlink()
    elif directory.is_dir():  # a plain folder, e.g. in a copied run
        os.rename(directory, tmp)
    # Complete folders a crashed save left without a link would otherwise bring it back.
    for entry in directory.parent.iterdir() if directory.parent.is_dir() else ():
        match = _ENTRY.match(entry.name)
        if match and match["name"] == directory.name and match["kind"] == "ckpt":
            if not _pid_alive(int(match["pid"])) or int(match["pid"]) == os.getpid():
                shutil.rmtree(entry, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)


def _is_current(entry: Path, directory: Path) -> bool:
    try:
        return find_checkpoint(directory) == entry.resolve()
    except CheckpointError:  # a file or a broken link at directory: keep everything
        return True


def swap_in(link: Path, directory: Path) -> Path | None:
    """Point ``directory`` at the link's target; return the previous folder to delete, if ours."""
    previous = None
    if directory.is_symlink():
        target = directory.parent / os.readlink(directory)
        match = _ENTRY.match(target.name)
        if match and match["kind"] == "ckpt" and target.parent == directory.parent:
            previous = target
    elif directory.is_dir():
        # A plain folder (a copied run) cannot be replaced atomically by a link. If it is a
        # torchwise checkpoint, move it under a hidden ckpt name first: until the link lands,
        # find_checkpoint reads it from there. Anything else is the user's, and stays.
        if not (directory / META_FILE).is_file():
            raise CheckpointError(
                f"{directory} exists and is not a torchwise checkpoint",
                hint="move it aside, or save checkpoints elsewhere",
            )
        previous = directory.parent / f".{directory.name}.ckpt-{os.getpid()}-{secrets.token_hex(4)}"
        os.rename(directory, previous)
    elif directory.exists():  # os.replace would overwrite the user's file with our link
        raise CheckpointError(
            f"{directory} is a file, not a checkpoint folder", hint="move it aside"
        )
    os.replace(link, directory)
    return previous


def discard_leftovers(directory: Path, tmp: Path, data: Path, link: Path) -> None:
    """After a failed save, remove what it wrote, unless it already is the checkpoint."""
    if link.is_symlink():
        link.unlink()
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        current = find_checkpoint(directory)
    except CheckpointError:
        current = None
    if data.is_dir() and current != data.resolve():
        shutil.rmtree(data, ignore_errors=True)


def fsync_path(path: Path) -> None:
    """fsync a file or a folder by name: a folder's entries (new files, renames) are durable
    only once the folder itself is synced."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0: existence check only
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process, alive
        return True
    return True


def copy_checkpoint(source: Path, directory: Path) -> None:
    """Make ``directory`` the same checkpoint as ``source``, atomically, by hard-linking its
    files (no byte is copied: checkpoint files are never changed once written, only replaced).
    Falls back to a copy where the file system has no hard links.

    >>> import tempfile, torch
    >>> from torchwise.checkpoints.checkpoint import load_checkpoint, save_checkpoint
    >>> root = Path(tempfile.mkdtemp())
    >>> save_checkpoint(root / "last", model_state={"w": torch.ones(1)}, training_state={}, meta={})
    >>> copy_checkpoint(root / "last", root / "best")
    >>> load_checkpoint(root / "best").model_state["w"]
    tensor([1.])
    """
    folder = find_checkpoint(Path(source))
    if folder is None:
        raise CheckpointError(f"there is no checkpoint at {source} to copy", hint="save it first")

    def link(tmp: Path) -> None:
        for file in sorted(folder.iterdir()):
            try:
                os.link(file, tmp / file.name)
            except OSError:
                shutil.copy2(file, tmp / file.name)
                fsync_path(tmp / file.name)

    publish_folder(Path(directory), link)


def publish_folder(directory: Path, fill: Callable[[Path], None]) -> None:
    """Fill a staging folder beside ``directory``, make it durable, swap it in, then delete the
    folder it replaced: at every instant ``directory`` is the old or the new checkpoint."""
    if directory.parent.is_symlink():  # a planted `checkpoints -> elsewhere` would take the writes outside
        raise CheckpointError(f"{directory.parent} is a symbolic link; torchwise does not write through links in "
                              "a run folder", hint="replace it with a real folder (or remove it) and run again")
    tmp, data, link = staging_paths(directory)
    try:
        tmp.mkdir()
        fill(tmp)
        fsync_path(tmp)
        previous = publish(tmp, data, link, directory)
    except BaseException as error:
        discard_leftovers(directory, tmp, data, link)
        if isinstance(error, OSError):
            raise CheckpointError(
                f"could not write the checkpoint {directory}: {error}",
                hint="it still holds the previous checkpoint (or this one, if the failure came "
                "after the swap); check free disk space and permissions",
            ) from error
        raise
    if previous is not None:  # only now: until the swap is durable, a power cut could restore
        shutil.rmtree(previous, ignore_errors=True)  # a link to it
