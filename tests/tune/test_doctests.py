"""The examples in the tuners' docstrings run and stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["torchwise.tune", "torchwise.tune.tracker", "torchwise.tune.state", "torchwise.tune.memory",
           "torchwise.tune.lr", "torchwise.tune.units", "torchwise.tune.batch_size",
           "torchwise.tune.workers"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
