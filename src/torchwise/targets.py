"""Resolve ``"package.module:name"`` targets to Python objects, with errors a user can act on.

>>> resolve_target("math:sqrt")(9.0)
3.0
>>> resolve_factory("subprocess:Popen", search_dir=None, makes=(dict,), what="a mapping")
Traceback (most recent call last):
...
torchwise.errors.TargetError: subprocess:Popen is the class Popen, not a mapping
hint: point it at a subclass of dict, or at a function that returns a mapping
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

from torchwise.errors import TargetError


def resolve_target(target: str, *, search_dir: Path | None = None) -> Any:
    """Import ``module:attr`` (``attr`` may be dotted). ``search_dir`` is tried first for the module.

    ``search_dir`` is the folder of the config file, so ``model.target: my_model:Net`` finds
    ``my_model.py`` beside the YAML, the way a user expects.
    """
    module_name, sep, attr_path = target.partition(":")
    if not sep or not module_name or not attr_path:
        raise TargetError(
            f"target {target!r} is not of the form 'package.module:name'",
            hint="write the module path, a colon, and the name, e.g. 'my_project.models:Net'",
        )
    added = False
    if search_dir is not None and str(search_dir) not in sys.path:
        sys.path.insert(0, str(search_dir))
        added = True
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name and module_name.startswith(err.name):
            raise TargetError(
                f"cannot import module {module_name!r} for target {target!r}",
                hint="check the spelling, or run from the folder that holds the module "
                "(the config file's folder is searched too)",
            ) from err
        raise
    finally:
        if added:
            sys.path.remove(str(search_dir))
    obj: Any = module
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(module) if not n.startswith("_")]
            raise TargetError(
                f"module {module_name!r} has no attribute {attr_path!r}",
                hint=f"names it defines: {', '.join(names[:12]) or '(none)'}",
            )
        obj = getattr(obj, part)
    return obj


def resolve_factory(target: str, *, search_dir: Path | None, makes: tuple[type, ...], what: str,
                    instances: bool = False) -> Any:
    """Resolve a target that a section will CALL, and refuse it before the call unless it can be
    what the section needs: a class must subclass one of ``makes``; anything else must be a
    function written in Python (a ``def``, a bound method, a ``functools.partial`` of one).

    Why before: calling is where a hostile name acts (``os:system``, ``subprocess:Popen``), so
    "returned X, not an nn.Module" after the call is too late. Built-in callables such as
    ``os.system`` are not Python functions and are refused here. ``instances`` also accepts an
    object that already is one of ``makes`` (a loss module instance).
    """
    obj = resolve_target(target, search_dir=search_dir)
    if isinstance(obj, type):
        if issubclass(obj, makes):
            return obj
        raise TargetError(f"{target} is the class {obj.__qualname__}, not {what}",
                          hint=f"point it at a subclass of {' or '.join(m.__name__ for m in makes)}, "
                               f"or at a function that returns {what}")
    if instances and isinstance(obj, makes):
        return obj
    if _python_function(obj):
        return obj
    raise TargetError(f"{target} is {_kind(obj)}, not {what} or a Python function that returns one",
                      hint=f"point it at a subclass of {' or '.join(m.__name__ for m in makes)} or a def "
                           "that builds one")


def _python_function(obj: Any) -> bool:
    if isinstance(obj, functools.partial):
        obj = obj.func
    if inspect.ismethod(obj):
        obj = obj.__func__
    return inspect.isfunction(obj)


def _kind(obj: Any) -> str:
    if inspect.isbuiltin(obj) or inspect.isroutine(obj):
        return f"the built-in callable {getattr(obj, '__qualname__', obj)!r}"
    if inspect.ismodule(obj):
        return f"the module {obj.__name__}"
    return f"a {type(obj).__name__} object"


def build_object(target: str, kwargs: dict[str, Any] | None = None, *, search_dir: Path | None = None,
                 makes: tuple[type, ...], what: str, instances: bool = False) -> Any:
    """The object a config names: a class is instantiated with ``kwargs``; a function is returned
    with ``kwargs`` bound (``functools.partial``), or as it is without them. Before anything is
    called, the target must be what its section needs (`resolve_factory`: ``makes``, ``what``).

    >>> import numbers
    >>> build_object("fractions:Fraction", {"numerator": 3, "denominator": 6}, makes=(numbers.Number,),
    ...              what="a number")
    Fraction(1, 2)
    >>> build_object("textwrap:shorten", {"width": 10}, makes=(str,), what="text")("a few words here")
    'a [...]'
    """
    obj = resolve_factory(target, search_dir=search_dir, makes=makes, what=what, instances=instances)
    kwargs = kwargs or {}
    try:
        if isinstance(obj, type):
            return obj(**kwargs)
    except TypeError as err:
        raise TargetError(f"{target} cannot be built with {kwargs}: {err}",
                          hint="check the names of the kwargs against its signature") from None
    return functools.partial(obj, **kwargs) if kwargs else obj


def factory_of(target: str, kwargs: dict[str, Any] | None = None, *, search_dir: Path | None = None,
               makes: tuple[type, ...], what: str) -> Any:
    """A callable that builds ``target`` from positional arguments plus the config's ``kwargs``
    (an optimizer from parameter groups, a scheduler from an optimizer), checked first to be a
    class or function that can make ``what``."""
    factory = resolve_factory(target, search_dir=search_dir, makes=makes, what=what)
    return functools.partial(factory, **(kwargs or {}))


def record_of(obj: Any) -> dict[str, Any]:
    """How a config records a Python object: ``{"target", "kwargs", "note"}``; the note says why
    the record cannot rebuild it (a lambda, a local function, an instance whose arguments are
    not known).

    >>> import functools, textwrap
    >>> record_of(functools.partial(textwrap.shorten, width=10))
    {'target': 'textwrap:shorten', 'kwargs': {'width': 10}, 'note': None}
    >>> record_of(lambda x: x)["note"]
    'a lambda or local function: pass the same object again to resume'
    """
    import functools
    import json

    kwargs: dict[str, Any] = {}
    note = None
    if isinstance(obj, functools.partial):
        kwargs = dict(obj.keywords)
        if obj.args:
            note = "positional arguments of a functools.partial are not recorded"
        obj = obj.func
    instance = not isinstance(obj, type) and not hasattr(obj, "__qualname__")
    kind = type(obj) if instance else obj
    module = getattr(kind, "__module__", None) or "?"
    qualname = getattr(kind, "__qualname__", type(kind).__name__)
    try:
        json.dumps(kwargs)
    except (TypeError, ValueError):
        kwargs = {key: repr(value) for key, value in kwargs.items()}
        note = "arguments that are not plain values are recorded as text"
    if "<" in qualname:
        note = "a lambda or local function: pass the same object again to resume"
    elif instance:
        note = "an object passed to fit(); its constructor arguments are not recorded"
    return {"target": f"{module}:{qualname}", "kwargs": kwargs, "note": note}
