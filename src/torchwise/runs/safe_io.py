"""The one way torchwise opens a file in a run or artefact folder: as a careful daemon would.

A run folder may come from someone else, so every name in it may be a trap: a symlink to a file
elsewhere (``metrics.jsonl -> ~/.ssh/id_rsa``, ``.lock -> ~/.bashrc``), a FIFO that blocks the
first ``open``, ``/dev/zero`` that never ends, a YAML alias tree or a JSON nest that eats memory.
So here a file is opened with ``O_NOFOLLOW | O_NONBLOCK`` (a link is refused, a FIFO does not
block), checked with ``fstat`` to be a regular file before a byte is read, and read only up to a
limit; temporary files come from ``mkstemp`` beside the target (no predictable name to plant).
Each refusal is a `FolderFileError` naming the file.

The limits, each overridable by an environment variable (documented in docs/sharing-runs-safely.md):

====================================  ==============  ==============================================
``TORCHWISE_MAX_DOCUMENT_BYTES``      16 MiB          a JSON or YAML document (config, summary...)
``TORCHWISE_MAX_LINE_BYTES``          1 MiB           one line of ``metrics.jsonl``/``events.jsonl``
``TORCHWISE_MAX_DEPTH``               64              nesting of a JSON or YAML document
``TORCHWISE_MAX_YAML_NODES``          100000          YAML nodes, each alias use counted again
``TORCHWISE_MAX_SAMPLE_ELEMENTS``     16777216        elements of one sample (model.json, manifest)
``TORCHWISE_MAX_INPUT_BYTES``         2 GiB           uncompressed arrays of a predict input file
``TORCHWISE_MAX_SNAPSHOT_BYTES``      64 MiB          one file kept by resume's folder snapshot
====================================  ==============  ==============================================

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> write_bytes_atomic(folder / "summary.json", b'{"status": "completed"}')
>>> read_json(folder / "summary.json")
{'status': 'completed'}
>>> (folder / "link.json").symlink_to(folder / "summary.json")
>>> read_json(folder / "link.json")
Traceback (most recent call last):
...
torchwise.runs.safe_io.FolderFileError: ... is a symbolic link; torchwise does not follow links in a run folder
hint: ...
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from torchwise.errors import TorchwiseError

DEFAULTS = {
    "TORCHWISE_MAX_DOCUMENT_BYTES": 16 << 20,
    "TORCHWISE_MAX_LINE_BYTES": 1 << 20,
    "TORCHWISE_MAX_DEPTH": 64,
    "TORCHWISE_MAX_YAML_NODES": 100_000,
    "TORCHWISE_MAX_SAMPLE_ELEMENTS": 1 << 24,
    "TORCHWISE_MAX_INPUT_BYTES": 2 << 30,
    "TORCHWISE_MAX_SNAPSHOT_BYTES": 64 << 20,
}
_HINT = "restore the file from the run's owner, or remove it; a folder someone sent you may be hostile"


class FolderFileError(TorchwiseError):
    """A file in a run or artefact folder that torchwise refuses to read: a link, not a regular
    file, too large, too deep, or not the document it should be."""


def limit(name: str) -> int:
    """The limit ``name`` (a key of `DEFAULTS`), from its environment variable when set."""
    text = os.environ.get(name)
    if text:
        try:
            value = int(text)
        except ValueError:
            raise FolderFileError(f"{name}={text!r} is not a whole number",
                                  hint=f"set {name} to a number, e.g. {DEFAULTS[name]}") from None
        if value > 0:
            return value
    return DEFAULTS[name]


def _too_large(path: Path, size: int, cap: int, variable: str) -> FolderFileError:
    return FolderFileError(f"{path} is {size} bytes, over the {cap}-byte limit for a file torchwise reads "
                           "from a run folder", hint=f"if the file is genuine, raise {variable}; otherwise {_HINT}")


def open_regular(path: Path, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """An fd on ``path`` opened without following a link and without blocking, after checking
    with fstat that it is a regular file; the caller closes it. Raises `FolderFileError`
    (FileNotFoundError passes through, so callers can treat a missing file as absent)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as err:
        if err.errno == errno.ELOOP or (err.errno == errno.ENOTDIR and os.path.islink(path)):
            raise FolderFileError(f"{path} is a symbolic link; torchwise does not follow links in a run folder",
                                  hint=_HINT) from None
        if err.errno == errno.ENXIO:  # a FIFO opened for writing with no reader
            raise FolderFileError(f"{path} is not a regular file", hint=_HINT) from None
        if isinstance(err, FileNotFoundError):
            raise
        raise FolderFileError(f"cannot open {path}: {err.strerror}", hint=_HINT) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise FolderFileError(f"{path} is not a regular file (a FIFO, device or folder)", hint=_HINT)
    os.set_blocking(fd, True)
    return fd


def read_bytes(path: Path, *, max_bytes: int | None = None,
               variable: str = "TORCHWISE_MAX_DOCUMENT_BYTES") -> bytes:
    """The whole of a regular file, refused when it is larger than the limit."""
    cap = max_bytes if max_bytes is not None else limit(variable)
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > cap:
            raise _too_large(path, size, cap, variable)
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, cap + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:  # grew while we read
                raise _too_large(path, total, cap, variable)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: Path, **kwargs: Any) -> str:
    try:
        return read_bytes(path, **kwargs).decode("utf-8")
    except UnicodeDecodeError:
        raise FolderFileError(f"{path} is not UTF-8 text", hint=_HINT) from None


def check_depth(path: Path, value: Any) -> Any:
    """``value`` back, or `FolderFileError` when it nests deeper than the limit (walked without
    recursion, so a deep document cannot exhaust the stack here either)."""
    cap = limit("TORCHWISE_MAX_DEPTH")
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > cap:
                raise _too_deep(path)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return value


def parse_json(path: Path, text: str | bytes) -> Any:
    """A JSON document that names ``path`` in any error; deep nesting is refused."""
    try:
        value = json.loads(text)
    except ValueError:
        raise FolderFileError(f"{path} is not valid JSON", hint=_HINT) from None
    except RecursionError:  # deeper than the parser's stack: past any depth limit
        raise _too_deep(path) from None
    return check_depth(path, value)


def _too_deep(path: Path) -> FolderFileError:
    cap = limit("TORCHWISE_MAX_DEPTH")
    return FolderFileError(f"{path} nests deeper than {cap} levels",
                           hint=f"if the file is genuine, raise TORCHWISE_MAX_DEPTH; otherwise {_HINT}")


def read_json(path: Path, *, kind: type | None = dict) -> Any:
    """A JSON document from a folder (size-, depth- and type-checked: ``kind`` is the type the
    top level must have, None for any)."""
    value = parse_json(path, read_bytes(path))
    if kind is not None and not isinstance(value, kind):
        raise FolderFileError(f"{path} does not hold a JSON {'object' if kind is dict else kind.__name__}",
                              hint=_HINT)
    return value


def read_json_or_none(path: Path, *, kind: type | None = dict) -> Any:
    """`read_json`, or None where the file is absent (a reader shows what is there)."""
    try:
        return read_json(path, kind=kind)
    except FileNotFoundError:
        return None


def iter_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Each complete JSON-object line; a torn line (a crash mid-write) is skipped. A line over the
    limit is refused as soon as the limit is passed, never held in memory whole."""
    cap = limit("TORCHWISE_MAX_LINE_BYTES")
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as handle:
        number = 0
        while line := handle.readline(cap + 1):
            number += 1
            if len(line) > cap:
                raise FolderFileError(f"{path} line {number} is longer than the {cap}-byte limit for a line",
                                      hint=f"if the file is genuine, raise TORCHWISE_MAX_LINE_BYTES; otherwise {_HINT}")
            try:
                record = check_depth(path, json.loads(line))
            except (ValueError, RecursionError, FolderFileError):
                continue
            if isinstance(record, dict):
                yield record


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return list(iter_jsonl(path))


def open_append(path: Path) -> Any:
    """A text handle appending to ``path`` (created 0644 when absent), never through a link."""
    return os.fdopen(open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "a")


def open_lock(path: Path) -> int:
    """The lock file's fd (created when absent), a regular file, not through a link, not blocking."""
    return open_regular(path, os.O_RDWR | os.O_CREAT)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` so that a reader never sees half of it: an unpredictable ``mkstemp`` name
    in the same folder, fsync, then ``os.replace`` (which replaces a planted link, not its target)."""
    if path.is_symlink():  # replacing it would hide the attack; refusing shows it
        raise FolderFileError(f"{path} is a symbolic link; torchwise does not write through links in a run folder",
                              hint=_HINT)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_folder(path: Path) -> Path:
    """``path`` back when it is a real folder (not a link to one); a `FolderFileError` otherwise."""
    if path.is_symlink():
        raise FolderFileError(f"{path} is a symbolic link; torchwise does not follow links in a run folder",
                              hint=_HINT)
    return path


def sibling_link_target(link: Path) -> Path | None:
    """Where a ``checkpoints/last``/``best`` link points, allowed only to a hidden folder beside
    it (``.last.ckpt-...``, as torchwise writes them); None when ``link`` is not a link."""
    if not link.is_symlink():
        return None
    target = os.readlink(link)
    if "/" in target or not target.startswith(".") or target in (".", ".."):
        raise FolderFileError(f"{link} points to {target}, outside its checkpoints folder",
                              hint="a checkpoint link must name a hidden folder beside it; " + _HINT)
    resolved = link.parent / target
    if resolved.is_symlink():
        raise FolderFileError(f"{link} points to {target}, which is itself a link", hint=_HINT)
    return resolved


def sample_elements(path: Path, shape: Any) -> int:
    """The number of elements of a sample shape read from ``path`` (a list of whole numbers),
    refused before anything is allocated when it is not one or over the limit."""
    if not isinstance(shape, (list, tuple)) or not all(type(n) is int and n >= 0 for n in shape):
        raise FolderFileError(f"{path} has a shape that is not a list of whole numbers: {str(shape)[:80]}",
                              hint=_HINT)
    cap, count = limit("TORCHWISE_MAX_SAMPLE_ELEMENTS"), 1
    for n in shape:
        count *= n
        if count > cap:
            raise FolderFileError(f"{path} gives a sample shape {list(shape)[:8]} of more than {cap} elements",
                                  hint=f"if it is genuine, raise TORCHWISE_MAX_SAMPLE_ELEMENTS; otherwise {_HINT}")
    return count


# The tags a run's config.yaml may hold: mappings, sequences and the plain scalars. Everything
# else (``!!binary``, which turns into a string the schema accepts; ``!!python/...``; a local
# ``!tag``; merge keys; timestamps and sets) is refused, whether written or implied.
PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("map", "seq", "str", "int", "float", "bool", "null"))


def parse_yaml(path: Path, text: str) -> Any:
    """A YAML document of plain data only, with node and depth limits checked on the node graph
    before anything is constructed (an alias tree is refused, not expanded)."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        try:
            root = loader.get_single_node()
        except RecursionError:
            raise _too_deep(path) from None
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            raise FolderFileError(f"{where}: not valid YAML: {getattr(err, 'problem', None) or err}",
                                  hint=_HINT) from None
        if root is None:
            return None
        _check_nodes(path, root)
        return loader.construct_document(root)
    finally:
        loader.dispose()


def _check_nodes(path: Path, root: Any) -> None:
    import yaml

    max_nodes, max_depth = limit("TORCHWISE_MAX_YAML_NODES"), limit("TORCHWISE_MAX_DEPTH")
    stack, seen = [(root, 1)], 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > max_nodes:
            raise FolderFileError(f"{path} expands to more than {max_nodes} YAML nodes (aliases count each "
                                  "time they are used)", hint=f"if it is genuine, raise TORCHWISE_MAX_YAML_NODES; "
                                                              f"otherwise {_HINT}")
        if depth > max_depth:
            raise _too_deep(path)
        if node.tag not in PLAIN_TAGS:
            line = node.start_mark.line + 1 if node.start_mark is not None else "?"
            raise FolderFileError(f"{path}:{line}: the YAML tag {node.tag} is not plain data",
                                  hint="a run's config.yaml holds mappings, lists, strings, numbers, booleans "
                                       f"and nulls only; {_HINT}")
        if isinstance(node, yaml.MappingNode):
            stack.extend((child, depth + 1) for pair in node.value for child in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)


def read_yaml(path: Path) -> Any:
    """`parse_yaml` of a folder file, size-checked first."""
    return parse_yaml(path, read_text(path))
