"""The examples in the train modules' docstrings run, so they cannot rot."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "torchwise.train.checkpoint",
    "torchwise.train.checkpoint_folder",
    "torchwise.train.state_codec",
    "torchwise.train.tensor_file",
    "torchwise.train.weights",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
