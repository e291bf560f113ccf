"""Known errors from importing torch and compiled extensions: torch not found, torch shadowed by
a source checkout, libraries that do not match each other, and Windows DLLs that fail to load.
"""

from __future__ import annotations

import re

from torchwise.env.compat import WHEEL_INDEX, companion_version
from torchwise.env.probe import installed_version
from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known, sentence


def _torch_missing(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="This Python cannot find torch",
        meaning="import torch found no torch package on this interpreter's path.",
        cause=(
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


def _undefined_symbol(match: re.Match[str], text: str) -> Explanation:
    path, symbol, version = match.group(1), match.group(2), match.group(3)
    parts = path.replace("\\", "/").split("/")
    where = "/".join(parts[-2:])
    if "/torch/lib/" in path.replace("\\", "/") and not version:
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
    if "/torch/lib/" in path.replace("\\", "/"):
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


def _unnamed_dll(text: str) -> Explanation:
    if not re.search(r"torch[\\/]+__init__\.py", text):
        return answer(
            title="Windows could not load a DLL that a Python package needs ([WinError 126])",
            meaning="A package loaded a DLL with ctypes; Windows could not find it or a DLL it needs.",
            cause="A runtime the package depends on is not installed or not on the PATH.",
            fix=(
                "Look at the frame above the error for the package and the DLL it loads, and"
                " install that package's runtime (often the Microsoft Visual C++"
                " Redistributable, x64)."
            ),
        )
    return answer(
        title="import torch could not load one of torch's DLLs ([WinError 126])",
        meaning=(
            "import torch loads every DLL in torch\\lib; Windows could not load one of them or a"
            " DLL it depends on (older torch does not print which)."
        ),
        cause=(
            "A runtime DLL is missing on this machine: the Microsoft Visual C++ Redistributable"
            " (vc_redist.x64.exe), or, for a CUDA build, the CUDA/NVIDIA libraries it expects."
        ),
        fix=(
            "Install the latest Microsoft Visual C++ Redistributable (x64) and reinstall torch"
            " from the official index (the CPU build on a machine without an NVIDIA GPU: pip"
            " install --force-reinstall torch --index-url https://download.pytorch.org/whl/cpu)."
        ),
    )


def _windows_dll(match: re.Match[str], text: str) -> Explanation:
    if match.group(1) is None:  # the bare "[WinError 126]": the DLL's name is not printed
        return _unnamed_dll(text)
    path = match.group(1)
    name = re.split(r"[\\/]+", path)[-1]
    line_start = text.rfind("\n", 0, match.start()) + 1
    if re.search(r"WinError 1455|paging file|页面文件", text[line_start : match.end()]):
        return _paging_file(name)
    return answer(
        title=f"Windows could not load {name} or a DLL it needs",
        meaning=(
            f"import torch loads {name} from torch\\lib; Windows could not load it or one of"
            " the DLLs it depends on ([WinError 126])."
        ),
        cause=(
            "A runtime DLL is missing on this machine: the Microsoft Visual C++ Redistributable,"
            " or libomp140.x86_64.dll, which the Windows wheels of torch 2.4.0 needed and did"
            " not ship."
        ),
        fix=(
            "Install the latest Microsoft Visual C++ Redistributable (x64), then reinstall torch"
            " in a fixed release from the official index: pip install --force-reinstall torch"
            " --index-url https://download.pytorch.org/whl/cu126 (or /cpu). Copying"
            " libomp140.x86_64.dll into torch\\lib is the stopgap people report."
        ),
    )


def _paging_file(name: str) -> Explanation:
    """[WinError 1455] names a DLL too, but it is memory, not a missing file: each process
    that imports torch maps its large CUDA DLLs, and Windows reserves page file space for them."""
    return answer(
        title=f"Windows ran out of virtual memory loading {name} (WinError 1455)",
        meaning=(
            "Each process that imports torch maps torch's large CUDA DLLs; Windows could not"
            " commit memory for one more, because RAM plus the paging file is used up."
        ),
        cause=(
            "Several processes import torch at once: every DataLoader worker on Windows"
            " (spawn) re-imports torch, so num_workers=8 loads the CUDA DLLs 9 times; with a"
            " small or fixed-size paging file that exceeds the commit limit."
        ),
        fix=(
            "Lower num_workers (2, or 0 to test), and let Windows manage the paging file size"
            " (System > Advanced > Performance > Virtual memory, 'System managed', on a drive"
            " with free space), or add RAM."
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


def _torch_attribute(match: re.Match[str], text: str) -> Explanation:
    module, name = match.group(1), match.group(2)
    version = fact(text, r"torch(?:==| version[ =:]*| )(\d+\.\d+\.\d+)")
    seen = f" (torch {version} here)" if version else ""
    private = name.startswith("_") or name.isupper()
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


# A shared library that the dynamic loader did not find, by what its name says it is.
SHARED_LIBRARIES = [
    (r"libpython", (
        "torch's extension is linked against the Python shared library, and this Python has none"
        " (a Python built without --enable-shared, e.g. by pyenv) or the wheel was built for"
        " another Python",
        "install the runtime library for this Python (apt-get install libpython3.X, or rebuild"
        " it with --enable-shared), or install torch with this interpreter's own pip:"
        " python -m pip install torch",
    )),
    (r"lib(?:i?omp|gomp)", (
        "the OpenMP runtime that torch's CPU kernels use is not installed (or the wheel that"
        " should ship it is broken)",
        "install it (conda install intel-openmp / llvm-openmp, or apt-get install libgomp1), or"
        " reinstall torch from the official index",
    )),
    (r"lib(?:cu|nv|nccl)", (
        "a CUDA library that this torch build expects is not found: the wheel was built for"
        " another CUDA, or its bundled nvidia-* packages are missing, or LD_LIBRARY_PATH points"
        " at another CUDA",
        "reinstall torch from the official index for your CUDA (pip install --force-reinstall"
        " torch --index-url https://download.pytorch.org/whl/cu126) and unset LD_LIBRARY_PATH",
    )),
]


def _shared_library(match: re.Match[str], text: str) -> Explanation:
    library = match.group(1)
    cause, fix = (
        "a system library that a compiled module needs is not installed on this machine",
        "install the package that provides it with the system package manager (apt-get, yum,"
        " conda), e.g. libgl1 for libGL.so.1",
    )
    for pattern, advice in SHARED_LIBRARIES:
        if re.match(pattern, library):
            cause, fix = advice
    return answer(
        title=f"A shared library is missing: {library}",
        meaning=(
            f"Importing a compiled module asked the dynamic loader for {library}, which is not"
            " on this machine (or not on its library path)."
        ),
        cause=sentence(cause),
        fix=sentence(fix),
    )


KNOWN: list[KnownError] = [
    known(
        "undefined-symbol",
        r"(\S+\.so[.\d]*): undefined symbol: (\w+)(?:, version (\S+))?",
        _undefined_symbol,
    ),
    known("torch-not-installed", r"No module named '?torch'?(?![\w.])", _torch_missing),
    known("torch-c-missing", r"No module named '?(?:torch\.)?_C'?(?![\w.])", _torch_c_missing),
    known(
        "windows-dll",
        r"Error loading \\*\"(.+?\.dll)\\*\" or one of its dependencies"
        r"|\[WinError 126\] The specified module could not be found(?!\. Error loading)()",
        _windows_dll,
    ),
    known(
        "shared-library-missing",
        r"(lib[\w.+-]*?\.so(?:\.[\d.]+)?): cannot open shared object file",
        _shared_library,
    ),
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
]
