"""Run-folder trust: a folder this user wrote is signed; a foreign one runs no code unless asked.

A run folder is data, but its ``config.yaml`` names code (``model.target: my_model:Net``) and a
``base_dir`` that resolving those names puts on ``sys.path``. Opening a folder someone else wrote
must not run their code unless the user says so. The model is Jupyter's notebook trust: every
folder torchwise writes carries ``signature.json``, an HMAC-SHA256 with a per-user secret over
``config.yaml`` and each checkpoint's ``meta.json`` (which holds the sha256 of the tensor files).
A folder whose signature checks out was written by this user; any other folder is foreign, and a
foreign folder whose config names a target outside torchwise stops at `check_run_trust` with the
list of modules and files it would import. Built-in models and sources need no trust.

>>> import tempfile
>>> run = Path(tempfile.mkdtemp())
>>> _ = (run / "config.yaml").write_text("model: {name: mlp}\\n")
>>> verify_run(run).trusted
False
>>> sign_run(run); verify_run(run).trusted
True
>>> _ = (run / "config.yaml").write_text("model: {target: 'subprocess:run'}\\n")
>>> verify_run(run).reason
'config.yaml changed since it was signed'
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchwise.errors import ConfigError, TrustError, UntrustedCodeError
from torchwise.runs.safe_io import FolderFileError, read_bytes, read_json, sibling_link_target
from torchwise.target_files import ModuleOrigin, locate_module

if TYPE_CHECKING:
    from torchwise.config import RunConfig

KEY_FILE = "run-signing.key"
SIGNATURE_FILE = "signature.json"
# Run files besides config.yaml that decide what is built (sizes, normalisation), so signed too.
RECORD_FILES = ("model.json", "data_stats.json")
SIGNATURE_VERSION = 1


def config_dir() -> Path:
    """The user's torchwise folder: $TORCHWISE_CONFIG_DIR, else $XDG_CONFIG_HOME/torchwise, else
    ~/.config/torchwise."""
    explicit = os.environ.get("TORCHWISE_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "torchwise"


def user_key(*, create: bool = True) -> bytes | None:
    """The per-user signing secret (32 random bytes), created on first use with mode 0600."""
    path = config_dir() / KEY_FILE
    if not path.exists():
        if not create:
            return None
        _create_key(path)
    return _read_private(path)


def _create_key(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    # Created 0600 from the first byte (no window where another user could read it).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_hex(32) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    try:
        # link never replaces: two processes creating the key at once end up with the same one.
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:  # a filesystem without hard links
        if not path.exists():
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _read_private(path: Path) -> bytes:
    info = path.stat()
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise TrustError(f"the run-signing key {path} can be read by other users (or is not yours)",
                         hint=f"make it private: chmod 600 {path} (or delete it to start a new key; runs "
                              "signed with the old one then need `torchwise trust`)")
    text = path.read_text().strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise TrustError(f"the run-signing key {path} is not a key torchwise wrote",
                         hint="delete it; torchwise makes a new one on the next run")
    return key


def key_id(key: bytes) -> str:
    """A short public name for a key, so a verdict can say 'signed with another key'."""
    return hashlib.sha256(b"torchwise key id\0" + key).hexdigest()[:16]


def signed_files(run_dir: Path) -> dict[str, str]:
    """sha256 of each file the signature covers: config.yaml and every checkpoint's meta.json
    (meta.json holds the sha256 of the checkpoint's tensor files, so the weights are covered)."""
    files: dict[str, str] = {}
    for name in ("config.yaml", *RECORD_FILES):
        if (digest := _sha256(run_dir / name)) is not None:
            files[name] = digest
    checkpoints = run_dir / "checkpoints"
    if checkpoints.is_dir() and not checkpoints.is_symlink():
        for entry in sorted(checkpoints.iterdir()):
            # Hidden entries are staging folders and the data behind `last`/`best` links; a
            # link is followed only to such a sibling (any other makes the folder unsigned).
            if entry.name.startswith("."):
                continue
            try:
                folder = sibling_link_target(entry) or entry
            except FolderFileError:
                files[f"checkpoints/{entry.name}"] = "link outside the folder"
                continue
            if (digest := _sha256(folder / "meta.json")) is not None:
                files[f"checkpoints/{entry.name}/meta.json"] = digest
    return files


def _sha256(path: Path) -> str | None:
    """sha256 of a folder file; None when absent (or not a plain, small file, which no signature
    of ours covers, so such a folder never verifies)."""
    try:
        return hashlib.sha256(read_bytes(path)).hexdigest()
    except FileNotFoundError:
        return None
    except (FolderFileError, NotADirectoryError):
        return "unreadable"


def _mac(key: bytes, files: dict[str, str]) -> str:
    message = json.dumps({"version": SIGNATURE_VERSION, "files": files}, sort_keys=True, separators=(",", ":"))
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def sign_run(run_dir: Path) -> None:
    """Sign the folder as written by this user (torchwise calls this whenever it writes the config
    or a checkpoint; `torchwise trust` calls it after the user accepts a foreign folder)."""
    _sign(run_dir / SIGNATURE_FILE, signed_files(run_dir))


_unsigned_warned: list[str] = []


def sign_written(run_dir: Path) -> None:
    """`sign_run` for what torchwise itself writes: a run never fails because it cannot be signed
    (a read-only home, a key others can read); it stays unsigned, and says so once per process.
    A folder a resume opened without checking all its code keeps its state (`check_run_trust`)."""
    if Path(run_dir).resolve() in _not_to_sign:
        return
    try:
        sign_run(run_dir)
    except (OSError, TrustError, FolderFileError) as err:  # FolderFileError: a link planted as signature.json
        if not _unsigned_warned:
            _unsigned_warned.append(str(run_dir))
            message = getattr(err, "message", None) or str(err)
            print(f"warning: {run_dir} is not signed as yours ({message}); opening it later asks for "
                  "--trust-code if it names code", file=sys.stderr)


def _sign(signature: Path, files: dict[str, str]) -> None:
    from torchwise.runs.folder import write_json_atomic

    key = user_key()
    assert key is not None
    write_json_atomic(signature, {"version": SIGNATURE_VERSION, "algorithm": "hmac-sha256", "key_id": key_id(key),
                                  "files": files, "hmac": _mac(key, files)})


@dataclass(frozen=True)
class Verdict:
    """Whether a run folder was signed by this user, and if not, why not (for messages)."""

    trusted: bool
    reason: str


def verify_run(run_dir: Path) -> Verdict:
    """Check ``signature.json`` against the folder's files and this user's key. Reads only."""
    return _verify(run_dir / SIGNATURE_FILE, signed_files(run_dir))


def _verify(signature: Path, current: dict[str, str]) -> Verdict:
    try:
        document = read_json(signature)
        stored_files, stored_mac = dict(document["files"]), str(document["hmac"])
    except FileNotFoundError:
        return Verdict(False, "it has no signature, so it was not written by torchwise on this account")
    except (OSError, ValueError, KeyError, TypeError, FolderFileError):
        return Verdict(False, f"its {signature.name} is unreadable")
    key = user_key(create=False)
    if key is None:
        return Verdict(False, "this account has no run-signing key yet, so it signed nothing")
    if hmac.compare_digest(_mac(key, current), stored_mac):
        return Verdict(True, "signed by you")
    if document.get("key_id") != key_id(key):
        return Verdict(False, "it was signed by another account or machine")
    if not hmac.compare_digest(_mac(key, stored_files), stored_mac):
        return Verdict(False, f"its {signature.name} was edited")
    changed = sorted(name for name in stored_files.keys() | current.keys()
                     if stored_files.get(name) != current.get(name))
    return Verdict(False, f"{', '.join(changed)} changed since it was signed")


# Artefacts whose loading can run code they carry: torch.export.load falls back to full unpickling
# when a safe load of its weights fails, and torch.jit.load has no safe mode (a TorchScript model
# is a program). ONNX holds operators that onnxruntime runs; no Python is loaded from it.
CODE_FORMATS = {"exported": "torch.export.load can fall back to unpickling what it carries",
                "torchscript": "a TorchScript model is a program and torch.jit.load has no safe mode"}


def artefact_signature(artefact: Path) -> Path:
    return artefact.with_name(f"{artefact.name}.signature.json")


def _artefact_files(artefact: Path) -> dict[str, str]:
    from torchwise.checkpoints.tensor_file import sha256_file
    from torchwise.export.manifest import manifest_path

    files = {artefact.name: sha256_file(artefact)} if artefact.is_file() and not artefact.is_symlink() else {}
    if (digest := _sha256(manifest_path(artefact))) is not None:
        files[manifest_path(artefact).name] = digest
    return files


def sign_artefact(artefact: Path) -> None:
    """Sign an exported artefact (and its manifest) as made by this user; `torchwise export`
    calls it, `torchwise trust ARTEFACT` after the user accepts a foreign one."""
    _sign(artefact_signature(artefact), _artefact_files(artefact))


def verify_artefact(artefact: Path) -> Verdict:
    return _verify(artefact_signature(artefact), _artefact_files(artefact))


def check_artefact_trust(artefact: Path, *, fmt: str, trust_code: bool = False) -> None:
    """The gate for artefacts: loading a ``.pt2`` or TorchScript file someone else made can run
    code, so it needs this user's signature or ``trust_code``; ONNX needs neither."""
    if trust_code or fmt not in CODE_FORMATS:
        return
    verdict = verify_artefact(artefact)
    if verdict.trusted:
        return
    raise UntrustedCodeError(
        f"{artefact} is not an artefact you exported ({verdict.reason}), and loading it can run code it "
        f"carries: {CODE_FORMATS[fmt]}",
        hint=f"load it only if you trust who made it: add --trust-code (Python: trust_code=True), or run "
             f"`torchwise trust {artefact}` to sign it as yours; or ask for the .onnx export, which runs no Python")


@dataclass(frozen=True)
class CodeTarget:
    """A `module:name` a config names, and where importing it would take code from."""

    key: str
    target: str
    origin: ModuleOrigin


def code_targets(cfg: RunConfig, *, skip: Sequence[str] = (),
                 sections: Sequence[str] | None = None) -> list[CodeTarget]:
    """Every target the VALIDATED config names, located without importing anything.

    Read from the typed model, not the YAML: whatever spelling the schema accepted (a bare
    ``"module:name"`` metric, a ``!!binary`` string, ``loss: {target: ...}``) arrives here as a
    ``target`` field. ``skip`` leaves out sections the caller supplies itself (``fit(model, data,
    resume=...)`` passes the model and data); ``sections``: only these are built.
    """
    found = []
    for key, value in typed_targets(cfg):
        section = key.split(".")[0]
        if sections is not None and section not in sections:
            continue
        if any(key == prefix or key.startswith(f"{prefix}.") for prefix in skip):
            continue
        module = value.partition(":")[0].strip()
        found.append(CodeTarget(key=key, target=value, origin=locate_module(module, search_dir=cfg.base_dir)))
    return found


def typed_targets(node: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(dotted key, value) of every ``target`` field in a config model, at any depth: walked rather
    than listed field by field, so a section that gains a ``target`` is covered the day it is added."""
    from pydantic import BaseModel

    if isinstance(node, BaseModel):
        for name in type(node).model_fields:
            value = getattr(node, name)
            if name == "target" and value is not None:
                yield f"{prefix}{name}", str(value)
            else:
                yield from typed_targets(value, f"{prefix}{name}.")
    elif isinstance(node, dict):
        for name, value in node.items():
            yield from typed_targets(value, f"{prefix}{name}.")
    elif isinstance(node, (list, tuple)):
        for index, value in enumerate(node):
            yield from typed_targets(value, f"{prefix}{index}.")


def describe_code(code: Sequence[CodeTarget], *, base_dir: Path | None) -> str:
    """The list a user reads before accepting: each key, target, module and file, and base_dir."""
    width = max(len(item.key) for item in code)
    target_width = max(len(item.target) for item in code)
    lines = [f"  {item.key:<{width}}  {item.target:<{target_width}}  ->  imports {item.origin.module} "
             f"{item.origin.describe()}" for item in code]
    if base_dir is not None:
        lines.append(f"  and puts its base_dir {base_dir} first on sys.path while importing them")
    return "\n".join(lines)


# Run folders this process must not sign: a resume that was given some sections (fit(model,
# data, resume=RUN)) did not check the code the folder's config names there, so signing the
# folder afterwards would vouch for what nobody looked at. It keeps the state it had.
_not_to_sign: set[Path] = set()


def check_run_trust(run_dir: Path, cfg: RunConfig, *, trust_code: bool = False,
                    skip: Sequence[str] = (), sections: Sequence[str] | None = None) -> None:
    """THE gate: call it before importing anything a run folder's config names.

    Passes when the config names only built-ins, when the folder is signed by this user, or when
    the user accepted its code (``trust_code``); otherwise raises `UntrustedCodeError` (exit 2)
    listing each module and file that would be imported. Nothing is imported to find out.
    ``sections``: only these are built (`load_model` builds the model alone); ``skip``: these are not.
    """
    unchecked = [item for item in code_targets(cfg) if item not in code_targets(cfg, skip=skip)]
    if unchecked and not verify_run(run_dir).trusted:
        _not_to_sign.add(Path(run_dir).resolve())
    if trust_code:
        return
    code = code_targets(cfg, skip=skip, sections=sections)
    if not code:
        return
    verdict = verify_run(run_dir)
    if verdict.trusted:
        return
    raise UntrustedCodeError(
        f"{run_dir} is not a run you wrote ({verdict.reason}), and opening it would import code it "
        f"names:\n{describe_code(code, base_dir=cfg.base_dir)}",
        hint=f"read that code first; to accept it, add --trust-code (Python: trust_code=True), or run "
             f"`torchwise trust {run_dir}` to sign the folder as yours")


def read_run_config(run_dir: Path) -> dict[str, Any]:
    """A run folder's ``config.yaml`` as plain data: no link followed, size, depth and node limits,
    and no YAML tag beyond the plain scalars (`safe_io.read_yaml`)."""
    from torchwise.runs.safe_io import read_yaml

    path = run_dir / "config.yaml"
    try:
        raw = read_yaml(path)
    except FileNotFoundError:
        raise ConfigError(f"{run_dir} is not a torchwise run folder (no config.yaml)",
                          hint="pass the folder a `torchwise train` run wrote, e.g. runs/digits") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path} does not hold a run config", hint="restore the run's config.yaml")
    return raw


def validated_run_config(run_dir: Path, overrides: Sequence[str] = ()) -> RunConfig:
    """`read_run_config`, validated by the schema (which imports nothing): what the gate reads."""
    from torchwise.config import apply_override, load_config

    raw = read_run_config(run_dir)
    for override in overrides:
        apply_override(raw, override)
    try:
        return load_config(None, base=raw)
    except ConfigError as err:
        raise ConfigError(f"{run_dir / 'config.yaml'}: {err.message}", hint=err.hint) from None


def open_run_config(run_dir: Path, *, trust_code: bool = False, skip: Sequence[str] = (),
                    sections: Sequence[str] | None = None, overrides: Sequence[str] = ()) -> RunConfig:
    """The one way to read a run folder's config for something that will build what it names
    (resume, load_model, predict, export): parse as plain data, validate, then pass `check_run_trust`
    on the typed config, so that the gate sees every target the schema accepted.

    Readers that only show a run (runs, diagnose, report) use `read_run_config` and import nothing.
    """
    cfg = validated_run_config(run_dir, overrides)
    check_run_trust(run_dir, cfg, trust_code=trust_code, skip=skip, sections=sections)
    return cfg
