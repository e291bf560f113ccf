"""``[tool.torchwise.lint]`` in the nearest pyproject.toml above a linted path.

```toml
[tool.torchwise.lint]
select = ["TW1"]            # code prefixes; default: every rule
ignore = ["TW115"]
per-file-ignores = { "scripts/*.py" = ["TW107"] }
```

>>> LintConfig().allows("TW101", "train.py")
True
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchwise.errors import LintError

try:
    import tomllib as _toml
except ModuleNotFoundError:  # Python 3.10: tomli if present, else no pyproject config
    try:
        import tomli as _toml  # type: ignore[no-redef]
    except ModuleNotFoundError:
        _toml = None  # type: ignore[assignment]


def matches(code: str, prefixes: tuple[str, ...]) -> bool:
    """Ruff-style selection: ``TW1`` matches every ``TW1xx`` code, ``ALL`` matches all."""
    return any(p == "ALL" or code.startswith(p) for p in prefixes)


@dataclass(frozen=True)
class LintConfig:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    root: Path | None = None

    def allows(self, code: str, path: str) -> bool:
        if not matches(code, self.select) or matches(code, self.ignore):
            return False
        relative = self._relative(path)
        return not any(
            fnmatch.fnmatch(relative, pattern) and matches(code, codes)
            for pattern, codes in self.per_file_ignores.items()
        )

    def _relative(self, path: str) -> str:
        if self.root is None:
            return Path(path).as_posix()
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return Path(path).as_posix()


def check_codes(codes: tuple[str, ...], where: str) -> tuple[str, ...]:
    """Upper-cased codes, or `LintError` naming one that selects no rule (a typo)."""
    from torchwise.lint.rules import all_rules

    known = all_rules()
    normalised = tuple(c.strip().upper() for c in codes)
    for code in normalised:
        if code != "ALL" and not any(k.startswith(code) for k in known):
            raise LintError(
                f"{where}: {code!r} matches no rule",
                hint=f"use a code or a prefix such as TW1 (rules: {min(known)}-{max(known)})",
            )
    return normalised


def _codes(value: Any, where: Path, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LintError(
            f"{where}: [tool.torchwise.lint] {key} must be a list of rule codes, got {value!r}",
            hint=f'write it as {key} = ["TW107", "TW115"]',
        )
    return check_codes(tuple(value), f"{where}: [tool.torchwise.lint] {key}")


def find_pyproject(start: Path) -> Path | None:
    """The first pyproject.toml at or above ``start`` (a file or a folder)."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate / "pyproject.toml"
    return None


def load_config(start: Path) -> LintConfig:
    """The lint config that governs ``start``; defaults where there is none."""
    pyproject = find_pyproject(start)
    if pyproject is None or _toml is None:
        return LintConfig()
    try:
        data = _toml.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, _toml.TOMLDecodeError) as err:
        raise LintError(f"{pyproject}: cannot read: {err}", hint="fix the TOML syntax") from err
    table = data.get("tool", {}).get("torchwise", {}).get("lint", {})
    per_file = table.get("per-file-ignores", table.get("per_file_ignores", {}))
    return LintConfig(
        select=_codes(table["select"], pyproject, "select") if "select" in table else ("ALL",),
        ignore=_codes(table.get("ignore", []), pyproject, "ignore"),
        per_file_ignores={k: _codes(v, pyproject, k) for k, v in per_file.items()},
        root=pyproject.parent,
    )
