"""A config that pydantic refused, told as one `ConfigError`: the unknown key with the closest
valid one ("did you mean"), or the bad value with the field's own description as the hint."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from torchwise.errors import ConfigError


def valid_keys(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every dotted key the schema accepts (for 'did you mean')."""
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        key = f"{prefix}{name}"
        yield key
        annotation = field.annotation
        for candidate in getattr(annotation, "__args__", (annotation,)):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                yield from valid_keys(candidate, f"{key}.")


def config_error_from(err: ValidationError, schema: type[BaseModel]) -> ConfigError:
    """Turn pydantic's report on ``schema`` (the run config) into one clear message and hint (the
    first problem found)."""
    problem = err.errors()[0]
    key = ".".join(str(p) for p in problem["loc"] if not isinstance(p, int)) or "(config)"
    if problem["type"] == "extra_forbidden":
        keys = list(valid_keys(schema))
        close = difflib.get_close_matches(key, keys, n=1, cutoff=0.5)
        if not close:
            leaf = key.rsplit(".", 1)[-1]
            close = [k for k in keys if k.rsplit(".", 1)[-1] == leaf][:1]
            close = close or difflib.get_close_matches(leaf, keys, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else "see examples/digits.yaml for valid keys"
        return ConfigError(f"unknown config key '{key}'", hint=hint)
    value = problem.get("input")
    message = problem["msg"].removeprefix("Value error, ")
    field_doc = _field_doc(schema, problem["loc"])
    hint = f"{key}: {field_doc}" if field_doc else f"{key} must satisfy: {message}"
    if problem["type"] == "value_error":
        return ConfigError(message, hint=hint)
    return ConfigError(f"invalid value {value!r} for '{key}': {message}", hint=hint)


def _field_doc(schema: type[BaseModel], loc: Sequence[Any]) -> str | None:
    model: Any = schema
    field = None
    for part in loc:
        if not isinstance(part, str) or model is None:
            break
        field = model.model_fields.get(part)
        if field is None:
            return None
        annotation = field.annotation
        model = next((c for c in getattr(annotation, "__args__", (annotation,))
                      if isinstance(c, type) and issubclass(c, BaseModel)), None)
    return field.description if field is not None else None
