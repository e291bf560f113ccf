"""The docstring examples in the lint package run, so they cannot rot."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "torchwise.lint.ast_names",
    "torchwise.lint.config",
    "torchwise.lint.context",
    "torchwise.lint.engine",
    "torchwise.lint.findings",
    "torchwise.lint.kinds",
    "torchwise.lint.fix",
    "torchwise.lint.registry",
    "torchwise.lint.report",
    "torchwise.lint.rules",
    "torchwise.lint.rules.clipping",
    "torchwise.lint.rules.config_keys",
    "torchwise.lint.rules.int_division",
    "torchwise.lint.rules.legacy",
    "torchwise.lint.rules.options",
    "torchwise.lint.rules.removed",
    "torchwise.lint.rules.shared_grads",
    "torchwise.lint.trained",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0, f"{name} has no example"
    assert result.failed == 0
