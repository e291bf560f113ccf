"""Known errors from importing torch and compiled extensions: torch not found, torch shadowed by
a source checkout, libraries that do not match each other, and Windows DLLs that fail to load.
"""

from __future__ import annotations

import re

from torchwise.env.compat import WHEEL_INDEX, companion_version
from torchwise.env.probe import installed_version
from torchwise.explain.evidence_gate import raising_frame
from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known
from torchwise.explain.families import build_isolation_errors


def _torch_missing(match: re.Match[str], text: str) -> Explanation:
    importer = raising_frame(text, match.start())  # round 9: a package's own import of torch
    needed = (
        f"The installed package {importer.package} imports torch ({importer.place}), and this environment has no"
        f" torch: {importer.package} needs it (even where it calls torch optional) and did not install it; or "
        if importer is not None and importer.package not in (None, "torch") else ""
    )
    return answer(
        title="This Python cannot find torch",
        meaning="import torch found no torch package on this interpreter's path.",
        cause=needed + (
            "torch was installed for another interpreter or environment (pip belongs to another"
            " Python, a conda/venv environment is not activated, a Jupyter kernel runs another"
            " environment), or Python runs inside a PyTorch source folder."
        ),
        fix=(
            "Install with the interpreter that runs the script: python -m pip install torch"
            " (in Jupyter: %pip install torch); python -c \"import sys; print(sys.executable)\""
            " shows which Python that is. Run scripts outside a PyTorch source checkout."
        ),
    )


def _torch_c_missing(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="import torch found a torch folder without its compiled core (torch._C)",
        meaning="The torch package Python imported has no compiled extension torch._C next to it.",
        cause=(
            "Python was started inside a PyTorch source checkout, so its local torch/ folder"
            " (never built) shadows the installed package; or the install is broken."
        ),
        fix=(
            "Run Python from another directory (cd elsewhere); python -c \"import torch;"
            " print(torch.__file__)\" shows which copy is imported. Reinstall torch if the"
            " installed copy itself lacks _C."
        ),
    )


TORCH_OWN = re.compile(r"/torch/(?:lib/|_C[\w.-]*\.so)")


def _undefined_symbol(match: re.Match[str], text: str) -> Explanation:
    path, symbol, version = match.group(1), match.group(2), match.group(3)
    parts = path.replace("\\", "/").split("/")
    where = "/".join(parts[-2:])
    own = TORCH_OWN.search(path.replace("\\", "/")) is not None  # torch/lib/*.so or torch/_C*.so
    if own and not version:
        return answer(
            title=f"torch's own {parts[-1]} does not match the rest of torch",
            meaning=f"{parts[-1]} needs {symbol}, which the other torch libraries loaded with it lack.",
            cause=(
                "Two torch installs mixed in one environment (pip over conda, or a partial"
                " upgrade), or a source build rebuilt without cleaning."
            ),
            fix=(
                "Remove every copy (pip uninstall torch until none is left; conda remove pytorch)"
                " and install once; for a source build run python setup.py clean, then rebuild."
            ),
        )
    if own:
        needed = f" from {version}" if version else ""
        return answer(
            title=f"torch's own {parts[-1]} found the wrong {version or 'system'} library",
            meaning=(
                f"Loading {parts[-1]} needs {symbol}{needed}; the copy of that library the"
                " loader found first lacks it."
            ),
            cause=(
                "A CUDA installed on the system (or another environment) comes first on"
                " LD_LIBRARY_PATH and shadows the libraries that torch's wheel brings."
            ),
            fix=(
                "Start Python without the system CUDA on the search path (unset"
                " LD_LIBRARY_PATH, or remove /usr/local/cuda*/lib64 from it); LD_DEBUG=libs"
                " python -c 'import torch' shows which file was picked. Reinstall torch if its"
                " own libraries are missing."
            ),
        )
    return answer(
        title=f"The compiled extension {where} was built for another torch",
        meaning=(
            f"{where} links against torch's C++ library and needs {symbol}, which the installed"
            " torch does not export: C++ extensions only load with the exact torch (and CUDA)"
            " they were compiled against."
        ),
        cause=(
            "torch was upgraded or reinstalled after the extension was installed, or a prebuilt"
            " wheel for another torch was picked."
        ),
        fix=(
            "Reinstall the extension for the installed torch: pip install --force-reinstall"
            " --no-cache-dir <package> (from the wheel index matching your torch and CUDA), or"
            " rebuild it from source in this environment (pip install --no-build-isolation .);"
            " or install the torch it was built for."
        ),
    )


# What each name of the removed torch._six is in plain Python (or torch) now.
TORCH_SIX = {
    "string_classes": "str",
    "int_classes": "int",
    "inf": "math.inf (or from torch import inf)",
    "container_abcs": "collections.abc",
    "PY3": "True",
}


def _torch_six(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1) or ""  # empty for "No module named 'torch._six'"
    named = [old for old in TORCH_SIX if old == name] or list(TORCH_SIX)  # all when unknown
    pairs = [f"{old} -> {TORCH_SIX[old]}" for old in named]
    instead = " " + ", ".join(pairs) + "."
    return answer(
        title="torch._six no longer exists in this torch",
        meaning=(
            "torch._six was a private Python 2/3 compatibility module; its names were removed"
            " step by step (int_classes in 1.9) and the module itself in torch 2.0."
        ),
        cause="The code (or a package it uses) was written for an older torch and imports from it.",
        fix=(
            "Edit the import to use the standard names:" + instead + " Or upgrade the package"
            " that has it (its newer releases dropped torch._six), or pin the older torch it was"
            " written for."
        ),
    )


def _torchvision_cuda(match: re.Match[str], text: str) -> Explanation:
    torch_cuda, vision_cuda = match.group(1), match.group(2)
    digits = torch_cuda.replace(".", "")
    torch_version = installed_version("torch")
    wanted = companion_version("torchvision", torch_version) if torch_version else None
    pin = f'"torchvision=={wanted}.*"' if wanted else "torchvision"
    return answer(
        title=f"torchvision was built for CUDA {vision_cuda}, this torch for CUDA {torch_cuda}",
        meaning=(
            "torchvision's compiled operators link against the CUDA runtime that torch brings;"
            " on import it checks that both were built for the same CUDA, and they were not."
        ),
        cause=(
            "torch and torchvision came from different wheel indexes: one of them was upgraded"
            f" or reinstalled alone (a preinstalled torch+cu{digits}, as on Colab, with a"
            " torchvision pulled from PyPI or another index, or the other way round)."
        ),
        fix=(
            "Install the torchvision that belongs with this torch, from torch's index:\n"
            f"    pip install --force-reinstall --no-deps {pin}"
            f" --index-url {WHEEL_INDEX}/cu{digits}\n"
            "or reinstall both in one command from one index (torchwise doctor checks the pair)."
        ),
    )


# torch's subpackages whose names are often written in the wrong order (torch.amp.cuda).
TORCH_SUBMODULES = {"cuda", "amp", "backends", "nn", "utils", "distributed", "optim", "jit", "onnx"}


def _swapped_path(module: str, name: str, meant: str) -> Explanation:
    return answer(
        title=f"{module} has no attribute '{name}': the path is written in the wrong order",
        meaning=f"{module}.{name} is not a torch name in any release; the subpackage is {meant}.",
        cause=(
            f"The code names {module}.{name}..., the two subpackages swapped, where it means"
            f" {meant} (a typo, not a torch version)."
        ),
        fix=f"Write {meant} (e.g. {meant}.custom_fwd for the decorator); no reinstall is needed.",
    )


# Names torch has had since its first public releases (0.1/0.2; not the 0.4 names such as
# tensor, device, dtype, no_grad): a torch without one of them is not the real package.
TORCH_FROM_THE_START = frozenset(
    "cuda nn optim utils autograd Tensor load save zeros ones randn rand cat stack from_numpy"
    " manual_seed is_tensor".split()
)


def _torch_attribute(match: re.Match[str], text: str) -> Explanation:
    module, name = match.group(1), match.group(2)
    version = fact(text, r"torch(?:==| version[ =:]*| )(\d+\.\d+\.\d+)")
    seen = f" (torch {version} here)" if version else ""
    private = name.startswith("_") or name.isupper()
    parts = module.split(".")
    if len(parts) == 2 and name in TORCH_SUBMODULES and parts[1] in TORCH_SUBMODULES:
        return _swapped_path(module, name, f"torch.{name}.{parts[1]}")
    if module == "torch" and name in TORCH_FROM_THE_START:
        return answer(
            title=f"The torch Python imported has no {name}: it is not a whole torch",
            meaning=(
                f"torch has had torch.{name} since its first public releases; the torch that Python"
                " imported has not."
            ),
            cause=(
                "Python imported something else under the name torch: a file torch.py or a folder"
                " named torch in the working directory (or on sys.path) shadows the package, or the"
                " install is broken (interrupted, or two installs mixed in one environment)."
            ),
            fix=(
                "python -c \"import torch; print(torch.__file__)\" shows what was imported: rename a"
                " local torch.py or torch folder (and delete its __pycache__), or uninstall every torch"
                " (pip uninstall torch until none is left) and install it again."
            ),
        )
    cause = (
        f"The code (or a package it imports) uses {module}.{name}, a name internal to torch that"
        f" this torch version does not have{seen}: it was written against another release."
        if private
        else f"The installed torch is older than the code{seen}: {module}.{name} came in a later"
        f" release. Less often a file or folder named {module.split('.')[0]} in the working"
        " directory shadows the real package."
    )
    return answer(
        title=f"{module} has no attribute '{name}'",
        meaning=f"The {module} that Python imported does not define {name}.",
        cause=cause,
        fix=(
            "python -c \"import torch; print(torch.__version__, torch.__file__)\" shows which torch"
            " runs and from where. Install the torch version the project's requirements name"
            " (for a public name, one new enough to have it); for a package that needs another"
            " torch, install the package release made for your torch."
        ),
    )


def _python2_module_attribute(match: re.Match[str], text: str) -> bool:
    """Python 2 names no module ('module' object has no attribute 'x'): torch's own import line
    (``_C.X``), or a user line that reads ``torch.x``, says it is torch."""
    name = match.group(1)
    return bool(re.search(rf"\b(?:torch|_C)\.{re.escape(name)}\b", text))


def _python2_torch_attribute(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1)
    if re.search(rf"\b_C\.{re.escape(name)}\b", text):
        return answer(
            title=f"torch's compiled part lacks {name}: torch._C does not match torch's Python files",
            meaning=f"Importing torch built its classes from torch._C, and that module has no {name}.",
            cause=(
                "The compiled torch._C comes from another torch than the Python files around it: a"
                " source build not rebuilt after git pull, or two installs mixed in one"
                " site-packages (conda and pip)."
            ),
            fix=(
                "Uninstall every torch (pip uninstall torch; conda remove pytorch), delete any"
                " leftover torch folder in site-packages, and install one build again (for a"
                " source build: python setup.py clean, then rebuild)."
            ),
        )
    return _torch_attribute(re.match(r"(torch)\.(\w+)", f"torch.{name}"), text)  # type: ignore[arg-type]


def _torch_symbol_unplaced(match: re.Match[str], text: str) -> Explanation:
    symbol = match.group(1)
    return answer(
        title="A compiled extension needs a symbol of torch's C++ library that is not loaded",
        meaning=(
            f"{symbol} is a C++ name from libtorch (at::, c10::, torch::, caffe2::): the module"
            " that needs it links against torch's libraries, and the symbol was not found when it"
            " was loaded."
        ),
        cause=(
            "The extension was imported before torch (its .so then finds no libtorch symbols),"
            " or it was compiled against another torch version than the installed one."
        ),
        fix=(
            "import torch before the extension module; if the error stays, rebuild or reinstall"
            " the extension for the installed torch (pip install --no-build-isolation ., or its"
            " wheel for your torch and CUDA)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "undefined-symbol",
        r"(\S+\.so[.\d]*): undefined symbol: (\w+)(?:, version (\S+))?",
        _undefined_symbol,
    ),
    known(
        "torch-not-installed",
        r"No module named '?torch'?(?![\w.])",
        _torch_missing,
        # inside a package's isolated build it is build_isolation_errors' reading, not a missing torch
        when=lambda match, text: not build_isolation_errors.IN_BUILD.search(text),
    ),
    known("torch-c-missing", r"No module named '?(?:torch\.)?_C'?(?![\w.])", _torch_c_missing),
    known(
        "torch-six-removed",
        r"cannot import name '(\w+)' from 'torch\._six'|No module named '?torch\._six'?()",
        _torch_six,
    ),
    known(
        "torchvision-cuda-mismatch",
        r"PyTorch and torchvision were compiled with different\s+CUDA (?:major )?versions\.?"
        r"\s+PyTorch has CUDA\s+Version=(\d+\.\d+) and torchvision has\s+CUDA\s+Version=(\d+\.\d+)",
        _torchvision_cuda,
    ),
    known(
        "torch-attribute-missing",
        r"module '(torch(?:\.\w+)*)' has no attribute '(\w+)'?",  # the closing quote may be lost
        _torch_attribute,
    ),
    known(
        "torch-attribute-missing",
        r"'module' object has no attribute '(\w+)'",  # Python 2's wording names no module
        _python2_torch_attribute,
        when=_python2_module_attribute,
    ),
    known(
        "torch-symbol-unplaced",
        r"(?<!\.so: )(?<![\d.]: )undefined symbol: (_ZN(?:2at|3c10|5torch|6caffe2)\w+)",
        _torch_symbol_unplaced,
        generic=True,
    ),
]
