"""Measure, then recommend: the tuners behind `torchwise tune` and `torchwise profile`.

Each takes the model and data you would give `fit` (and its ``config``), runs real steps, and
leaves the model, optimizer, scheduler and RNGs exactly as they were. Importing this package
imports torch (``import torchwise`` alone does not).

>>> import torchwise.tune
>>> sorted(torchwise.tune.__all__)
['compile_gain', 'estimate_memory', 'find_batch_size', 'lr_range_test', 'profile_steps', 'tune_workers']
"""

from __future__ import annotations

from torchwise.tune.batch_size import find_batch_size
from torchwise.tune.compile import compile_gain
from torchwise.tune.lr import lr_range_test
from torchwise.tune.memory import estimate_memory
from torchwise.tune.profile import profile_steps
from torchwise.tune.workers import tune_workers

__all__ = ["compile_gain", "estimate_memory", "find_batch_size", "lr_range_test", "profile_steps", "tune_workers"]
