"""Locating a target's files imports nothing; resolving one refuses what its section cannot use."""

from __future__ import annotations

import sys

import pytest
from torch import nn

from torchwise.errors import TargetError
from torchwise.target_files import locate_module
from torchwise.targets import resolve_factory


def hostile_package(root, marker):
    """``evilpkg/__init__.py`` and ``evilpkg/sub.py`` each write the marker when imported."""
    package = root / "evilpkg"
    package.mkdir(parents=True)
    for name in ("__init__.py", "sub.py"):
        (package / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    (root / "evil_top.py").write_text(f"open({str(marker)!r}, 'a').write('top')\n")
    return package


def test_locating_a_dotted_module_runs_no_parent_init(tmp_path):
    marker = tmp_path / "marker"
    package = hostile_package(tmp_path / "code", marker)
    origin = locate_module("evilpkg.sub", search_dir=package.parent)
    assert origin.files == (package / "__init__.py", package / "sub.py")
    assert origin.describe() == f"from {package / 'sub.py'} (after 1 package __init__ file above it)"
    assert locate_module("evil_top", search_dir=package.parent).files == (package.parent / "evil_top.py",)
    assert not marker.exists()
    assert "evilpkg" not in sys.modules and "evil_top" not in sys.modules
    assert str(package.parent) not in sys.path


def test_locate_reports_builtin_and_missing_modules():
    assert locate_module("sys").describe() == "(compiled into Python)"
    assert locate_module("no_such_pkg_xyz.sub").describe() == "(not found on this machine)"
    assert locate_module("os.path").files[-1].name == "posixpath.py"


def test_resolve_factory_refuses_builtin_callables_before_calling_them():
    with pytest.raises(TargetError) as caught:
        resolve_factory("os:system", search_dir=None, makes=(nn.Module,), what="an nn.Module")
    assert caught.value.message == ("os:system is the built-in callable 'system', not an nn.Module or a Python "
                                    "function that returns one")
    with pytest.raises(TargetError) as caught:
        resolve_factory("subprocess:Popen", search_dir=None, makes=(nn.Module,), what="an nn.Module")
    assert caught.value.message == "subprocess:Popen is the class Popen, not an nn.Module"
    assert caught.value.hint == "point it at a subclass of Module, or at a function that returns an nn.Module"


def test_resolve_factory_accepts_module_classes_functions_and_instances_when_asked():
    assert resolve_factory("torch.nn:Linear", search_dir=None, makes=(nn.Module,), what="m") is nn.Linear
    fn = resolve_factory("torch.nn.functional:mse_loss", search_dir=None, makes=(nn.Module,), what="m")
    assert fn is nn.functional.mse_loss
    with pytest.raises(TargetError):
        resolve_factory("torch.nn.modules.loss:_Loss.__init__.__class__", search_dir=None, makes=(nn.Module,),
                        what="m")
