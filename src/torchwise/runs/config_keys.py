"""Config dicts as dotted keys, and the keys on which several runs differ (ledger, MLflow params).

>>> flatten({"optim": {"lr": 0.1, "betas": [0.9, 0.99]}, "name": "a"})
{'optim.lr': 0.1, 'optim.betas': [0.9, 0.99], 'name': 'a'}
>>> differing_keys([{"optim": {"lr": 0.1}, "name": "a"}, {"optim": {"lr": 0.2}, "name": "b"}])
['optim.lr']
>>> differing_keys([{"model": {"kwargs": {}}}, {"model": {"kwargs": {"hidden": [64]}}}])
['model.kwargs.hidden']
"""

from __future__ import annotations

import json
from typing import Any


def flatten(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"optim": {"lr": 0.1}}`` -> ``{"optim.lr": 0.1}`` (lists and empty dicts stay values)."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict) and value:
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


# Keys that differ between any two runs and say nothing about how they trained.
IGNORED_KEYS = ("name", "base_dir")


def differing_keys(configs: list[dict[str, Any]]) -> list[str]:
    """The dotted config keys whose values are not the same in every run, in config order."""
    flats = [flatten(c) for c in configs]
    keys: list[str] = []
    for flat in flats:
        keys.extend(k for k in flat if k not in keys)
    missing = object()
    differing = [k for k in keys if k not in IGNORED_KEYS
                 and len({json.dumps(f.get(k, missing), sort_keys=True, default=str) for f in flats}) > 1]
    # `model.kwargs={}` in one run and `model.kwargs.hidden=[64]` in another: the leaf says it all.
    return [k for k in differing if not any(other.startswith(f"{k}.") for other in differing)]
