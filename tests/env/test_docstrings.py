"""The examples in the docstrings of the doctor and explain modules run and stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "torchwise.env",
    "torchwise.env.compat",
    "torchwise.env.findings",
    "torchwise.env.precision",
    "torchwise.env.probe",
    "torchwise.diagnose.errors",
    "torchwise.diagnose.explanation",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
