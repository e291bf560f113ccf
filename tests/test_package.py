"""The top-level package: cheap to import, and what it offers is what `dir()` shows."""

from __future__ import annotations

import subprocess
import sys


def test_dir_shows_the_lazily_loaded_api_without_loading_it():
    code = ("import sys, torchwise; names = dir(torchwise); "
            "print(all(n in names for n in ('fit', 'explain', 'doctor', 'load_model', 'WeightsMismatch')), "
            "'torch' in sys.modules, '__version__' in names)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "True"]


def test_every_name_dir_shows_resolves():
    import torchwise

    for name in dir(torchwise):
        assert getattr(torchwise, name) is not None, name
