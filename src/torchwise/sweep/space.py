"""The space file: which config keys a sweep searches, and over what.

One line per config key (a dotted key, as in overrides), each with one distribution::

    optim.lr: {log_float: [1e-4, 1e-1]}
    optim.weight_decay: {float: [0.0, 0.1]}
    model.kwargs.hidden: {choice: [[64], [256, 128]]}
    train.batch_size: {int: [16, 128], step: 16}

Kinds: ``float``, ``log_float``, ``int``, ``log_int`` (``[low, high]``, both included; ``step``
for the non-log ones) and ``choice`` (a list of any YAML values). Every key and every bound is
checked against the config schema by the override machinery (`config.load_config`), so a typo
gets the same "did you mean" as ``torchwise train ... optim.lrr=1``, before any trial starts.

>>> space = parse_space({"optim.lr": {"log_float": [1e-4, 1e-1]}, "train.batch_size": {"int": [16, 64], "step": 16}})
>>> [(p.key, p.kind, p.low, p.high, p.step) for p in space]
[('optim.lr', 'log_float', 0.0001, 0.1, None), ('train.batch_size', 'int', 16, 64, 16)]
>>> space[1].override(32)
'train.batch_size=32'
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchwise.errors import ConfigError

KINDS = ("float", "log_float", "int", "log_int", "choice")
EXAMPLE_RANGES = {"float": "[0.0, 0.1]", "log_float": "[1.0e-4, 1.0e-1]", "int": "[16, 128]", "log_int": "[8, 512]"}
EXAMPLE = "e.g. optim.lr: {log_float: [1e-4, 1e-1]}  or  train.batch_size: {int: [16, 128], step: 16}"


class SpaceError(ConfigError):
    """The space file is wrong: unknown key or kind, an empty range, a log range touching 0."""


@dataclass(frozen=True)
class Parameter:
    """One searched config key and its distribution."""

    key: str
    kind: str
    low: float | int | None = None
    high: float | int | None = None
    step: float | int | None = None
    choices: tuple[Any, ...] = ()

    @property
    def log(self) -> bool:
        return self.kind.startswith("log_")

    def encoded_choices(self) -> tuple[Any, ...]:
        # Optuna's categorical values are scalars; a list such as [256, 128] goes in as its JSON text.
        return tuple(c if c is None or isinstance(c, (bool, int, float, str)) else json.dumps(c) for c in self.choices)

    def distribution(self) -> Any:
        from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

        if self.kind == "choice":
            return CategoricalDistribution(self.encoded_choices())
        if self.kind in ("int", "log_int"):
            return IntDistribution(int(self.low), int(self.high), log=self.log, step=int(self.step or 1))
        return FloatDistribution(float(self.low), float(self.high), log=self.log, step=self.step)

    def value(self, sampled: Any) -> Any:
        """The config value of what Optuna sampled (a choice's JSON text back to its list)."""
        if self.kind != "choice":
            return sampled
        return self.choices[self.encoded_choices().index(sampled)]

    def override(self, value: Any) -> str:
        """``key=value`` for `config.load_config` (JSON is YAML, so any value round-trips)."""
        return f"{self.key}={json.dumps(value)}"

    def bounds(self) -> tuple[Any, ...]:
        """The values to check against the schema: both ends of a range, or every choice."""
        return self.choices if self.kind == "choice" else (self.low, self.high)


def read_space(path: Path) -> list[Parameter]:
    """Read and parse a space file (see the module docstring)."""
    from torchwise.config import read_yaml

    path = Path(path)
    if not path.is_file():
        raise SpaceError(f"space file {str(path)!r} does not exist",
                         hint=f"write a YAML file of config keys, {EXAMPLE}")
    raw = read_yaml(path)
    if not isinstance(raw, dict) or not raw:
        raise SpaceError(f"space file {path} must be a mapping of config keys to distributions",
                         hint=EXAMPLE)
    return parse_space(raw, source=str(path))


def parse_space(raw: dict[str, Any], *, source: str = "space") -> list[Parameter]:
    """Parameters from the space mapping; each wrong entry is a `SpaceError` naming it."""
    return [parse_parameter(str(key), spec, source=source) for key, spec in raw.items()]


def parse_parameter(key: str, spec: Any, *, source: str) -> Parameter:
    where = f"{source}: {key}"
    if not isinstance(spec, dict):
        raise SpaceError(f"{where}: {spec!r} is not a distribution", hint=EXAMPLE)
    kinds = [k for k in spec if k in KINDS]
    unknown = [k for k in spec if k not in KINDS and k != "step"]
    if unknown or len(kinds) != 1:
        wrong = unknown[0] if unknown else ", ".join(map(str, kinds)) or "nothing"
        close = difflib.get_close_matches(str(wrong), KINDS, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close and unknown else f"give exactly one of {', '.join(KINDS)}"
        raise SpaceError(f"{where}: unknown distribution '{wrong}'" if unknown
                         else f"{where}: one distribution per key, got {wrong}", hint=hint)
    kind, step = kinds[0], spec.get("step")
    values = spec[kind]
    if kind == "choice":
        if step is not None:
            raise SpaceError(f"{where}: a choice takes no step", hint="drop step, or use int/float for a range")
        if not isinstance(values, list) or not values:
            raise SpaceError(f"{where}: choice needs a non-empty list of values",
                             hint="e.g. model.kwargs.hidden: {choice: [[64], [256, 128]]}")
        return Parameter(key, kind, choices=tuple(values))
    return Parameter(key, kind, *check_range(where, kind, values, step), step=step)


def check_range(where: str, kind: str, values: Any, step: Any) -> tuple[Any, Any]:
    """``[low, high]`` for a range kind: numbers, low < high, log ranges above 0, ints for ints."""
    integer = kind in ("int", "log_int")
    number = int if integer else (int, float)
    if not integer and isinstance(values, list):
        values = [as_number(v) for v in values]
    if not (isinstance(values, list) and len(values) == 2
            and all(isinstance(v, number) and not isinstance(v, bool) for v in values)):
        want = "two integers" if integer else "two numbers"
        raise SpaceError(f"{where}: {kind} needs [low, high], {want}; got {values!r}",
                         hint=f"e.g. {kind}: {EXAMPLE_RANGES[kind]}")
    low, high = values
    if not all(math.isfinite(v) for v in values):
        raise SpaceError(f"{where}: the range {values} is not finite", hint="give finite bounds")
    if low >= high:
        raise SpaceError(f"{where}: the range [{low}, {high}] is empty (low must be below high)",
                         hint=f"swap the bounds: [{high}, {low}]" if low > high else
                         f"widen it, or set the key to {low} in the config (a fixed value is not searched)")
    if kind.startswith("log_") and low <= 0:
        raise SpaceError(f"{where}: a log range must lie above 0, and [{low}, {high}] touches 0",
                         hint=f"start it above 0, e.g. [{high / 1000:g}, {high}], or use "
                              f"{kind.removeprefix('log_')}: for a linear range that includes 0")
    if step is not None:
        if kind.startswith("log_"):
            raise SpaceError(f"{where}: a log range takes no step",
                             hint=f"drop step, or use {kind.removeprefix('log_')}")
        if not isinstance(step, number) or isinstance(step, bool) or step <= 0:
            raise SpaceError(f"{where}: step must be a positive {'integer' if integer else 'number'}, got {step!r}",
                             hint="e.g. step: 16")
    return low, high


def as_number(value: Any) -> Any:
    """YAML 1.1 reads ``1e-3`` (no dot) as a string; a range bound means the number."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def check_against_config(space: Sequence[Parameter], config: Path | None, overrides: Sequence[str]) -> None:
    """Every key and bound must make a valid config, with the override machinery's errors (an
    unknown key names the closest valid one) prefixed by the space entry."""
    from torchwise.config import load_config

    load_config(config, list(overrides))  # the base config itself first: its own errors as they are
    for parameter in space:
        for value in parameter.bounds():
            try:
                load_config(config, [*overrides, parameter.override(value)])
            except ConfigError as err:
                raise SpaceError(f"space key {parameter.key} = {value!r}: {err.message}", hint=err.hint) from None
