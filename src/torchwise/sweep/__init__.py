"""Hyperparameter sweeps on Optuna: each trial a run folder, pruned on the monitored metric.

``torchwise.sweep(config, space, trials=20)`` runs one (`torchwise.sweep.study.sweep`): this
package is itself callable, so the function and its modules share the name ``torchwise.sweep``.
Modules: space (the space file), record (sweep.json), storage (Optuna storage, sampler,
pruner), pruning (the loop hook), worker (ask, train, tell), study (start to end), table (the
live view), report (``torchwise report SWEEP``). Optuna is imported only when a sweep runs.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _SweepPackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from torchwise.sweep.study import sweep

        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _SweepPackage
