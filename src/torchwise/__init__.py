"""torchwise: the whole PyTorch path in one tool.

``import torchwise`` is cheap: torch and everything heavy load on first use of the API.

>>> import torchwise
>>> callable(torchwise.fit)
True
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> "module:attribute" (or "module" for a module itself), resolved on first access
_LAZY: dict[str, str] = {
    "TorchwiseError": "torchwise.errors:TorchwiseError",
    "fit": "torchwise.api:fit",
    "load_model": "torchwise.checkpoints.load:load_model",
    "load_config": "torchwise.config:load_config",
    "RunConfig": "torchwise.config:RunConfig",
    "RunResult": "torchwise.train.run:RunResult",
    "WeightsMismatch": "torchwise.errors:WeightsMismatch",
    "doctor": "torchwise.env:doctor",
    # the package itself, callable: the function users call shares its name (see its docstring)
    "explain": "torchwise.explain",
    "Explanation": "torchwise.explain.explanation:Explanation",
    # not "lint": that name is the torchwise.lint subpackage
    "lint_paths": "torchwise.lint.engine:lint_paths",
    "summary": "torchwise.diagnose.summary:summary",
    # not "diagnose": that name is the torchwise.diagnose subpackage
    "diagnose_run": "torchwise.diagnose.run_diagnosis:diagnose_run",
    # not "export": that name is the torchwise.export subpackage
    "export_run": "torchwise.export.exporter:export_run",
    "export_module": "torchwise.export.exporter:export_module",
    "predict": "torchwise.export.predict:predict",
    "stream_part": "torchwise.data.streams:stream_part",
    # the package itself: it is callable, torchwise.sweep(config, space, trials=...) (sweep/__init__.py)
    "sweep": "torchwise.sweep",
}

__all__ = ["__version__", *_LAZY]


def __dir__() -> list[str]:
    """The lazily loaded names too, so that ``dir(torchwise)`` and tab completion show them."""
    return sorted({*globals(), *_LAZY})


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'torchwise' has no attribute {name!r}")
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    value = getattr(module, attr) if attr else module
    globals()[name] = value
    return value
