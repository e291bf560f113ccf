"""Registries that build classes by name from a config: OpenMMLab's (mmcv, mmengine), fvcore's
(detectron2) and the copies other projects ship (basicsr). A decorator such as
``@MODELS.register_module()`` or ``@META_ARCH_REGISTRY.register()`` puts a class in the registry
when the module that defines it is imported; a config then names it (``type='ReDet'``,
``META_ARCHITECTURE: "MyRCNN"``).

Two messages, whatever library holds the registry:

* the name is not in the registry (``'ReDet is not in the models registry'``, ``No object named
  'X' found in 'META_ARCH' registry``): nothing registered that name in this process. The paste
  tells apart a class registered under another spelling (``class mymodel`` where the config asks
  for ``Mymodel``) and a config that never set the name (``'None'``); otherwise the module that
  registers it was not imported, or the package imported is another copy than the one defining it;
* the name is registered twice (``'ConvWS is already registered in conv layer'``, ``An object
  named 'X' was already registered in 'Y' registry``): the code that registers it ran twice,
  from two packages or two copies of one.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import frames

NOT_IN = (
    r"(?:'|\"|: )([\w.]+) is not in the ([\w:. -]+?) registry"
    r"|No object named '([\w.]+)' found in '([\w .-]+)' registry"
)
TWICE = (
    r"'([\w.]+) is already registered in ([\w :.-]+?)'"
    r"|An object named '([\w.]+)' was already registered in '([\w .-]+)' registry"
)


def _names(match: re.Match[str]) -> tuple[str, str]:
    name = match.group(1) or match.group(3)
    registry = (match.group(2) or match.group(4)).strip()
    return name, registry


def _registry_package(text: str, before: int) -> str | None:
    """The installed package whose registry raised (its frame's site-packages folder)."""
    for _, frame in reversed(frames(text[:before])):
        if frame.package and "regist" in frame.file.lower() + frame.function.lower():
            return frame.package
    return None


def _builder(text: str, before: int) -> str | None:
    """The file of the last frame outside the registry's own package that asked for the build:
    the copy of the code whose config was read."""
    found = frames(text[:before])
    packages = {frame.package for _, frame in found if frame.package and "regist" in frame.file.lower()}
    for _, frame in reversed(found):
        if frame.package not in packages and not frame.in_library:
            return frame.file
    return None


def _other_spelling(name: str, text: str) -> str | None:
    """A class in the paste whose name is the asked name in another case: ``class mymodel``."""
    for found in re.finditer(r"\bclass\s+(\w+)\s*[(:]", text):
        if found.group(1) != name and found.group(1).lower() == name.lower():
            return found.group(1)
    return None


def _not_registered(match: re.Match[str], text: str) -> Explanation:
    name, registry = _names(match)
    meaning = (
        f"A config asked the {registry} registry for {name}; a registry holds only the classes whose"
        " defining module has been imported in this process (each registers itself with a decorator"
        " such as @MODELS.register_module() or @META_ARCH_REGISTRY.register())."
    )
    spelt = _other_spelling(name, text)
    if name == "None":
        return answer(
            title=f"The config names no class for the {registry} registry (None)",
            meaning=meaning,
            cause="The config key that names the class is unset (None): the config file does not set it, or sets"
            " it under another key or in a base config that was not loaded.",
            fix="Set the class's name in the config (the type or *_ARCHITECTURE key the builder reads), and check"
            " that the config file and its base files are the ones loaded.",
        )
    if spelt:
        return answer(
            title=f"{name} is not in the {registry} registry: the class is named {spelt}",
            meaning=meaning,
            cause=f"The class is defined as {spelt}, so it is registered under that name (the class's own name,"
            f" case included), while the config asks for {name}. The module that defines it must also be"
            " imported before the build.",
            fix=f"Use one spelling in both places (type='{spelt}' in the config, or rename the class {name}), and"
            " import its module before building (custom_imports in an OpenMMLab config, or an import in the"
            " package's __init__.py).",
        )
    builder = _builder(text, match.start())
    where = f" (the build ran from {builder})" if builder else ""
    return answer(
        title=f"{name} is not in the {registry} registry",
        meaning=meaning,
        cause=(
            f"Nothing registered {name} in this process{where}: the module that defines it was never"
            " imported (registration runs only at import: a custom module the config or the script does not"
            f" import), or the package imported is another copy than the one that defines {name}, such as"
            " a stock release of the library where the project ships its own version, or a release older"
            f" than {name}; or the config spells it differently from the class."
        ),
        fix=(
            f"Find the class (grep -rn 'class {name}' in the project); if the project defines it, install the"
            " project itself (pip install -v -e . in its folder) so that its package is the one imported, and"
            " import the module before the build (OpenMMLab configs: custom_imports=dict(imports=[...],"
            " allow_failed_imports=False); detectron2: import the project's modeling package in the script);"
            " if it is the library's, upgrade to a release that has it."
        ),
    )


def _registered_twice(match: re.Match[str], text: str) -> Explanation:
    name, registry = _names(match)
    package = _registry_package(text, match.start())
    holder = f"{package}'s {registry}" if package else f"the {registry}"
    return answer(
        title=f"{name} is registered twice in {holder} registry",
        meaning=(
            f"A module registered {name} while the registry already held that name; registries refuse a second"
            " class under one name."
        ),
        cause=(
            f"Code that registers {name} ran twice in this process: two packages, or two releases of them, both"
            f" define {name} (a newer {package or 'base library'} that added it while an older package built on"
            " it still registers its own), the same package is imported from two places (installed in"
            " site-packages and again as a source folder or a copy bundled in the project, under two import"
            f" names), or the project defines two classes named {name} (a copied file)."
        ),
        fix=(
            f"Keep one definition: install the versions of {package or 'the base library'} and the package"
            " that uses it that are made for each other (its install guide's version table, or the project's"
            " requirements), remove the second install or copy and import the package under one name, and"
            " rename a copied class."
        ),
    )


KNOWN: list[KnownError] = [
    known("registry-name-missing", NOT_IN, _not_registered),
    known("registry-name-twice", TWICE, _registered_twice),
]
