"""Known errors from importing torch and compiled extensions: torch not found, torch shadowed by
a source checkout, libraries that do not match each other, and Windows DLLs that fail to load.
"""

from __future__ import annotations

import re

from torchwise.diagnose.explanation import Explanation, KnownError, answer, known


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


def _windows_dll(match: re.Match[str], text: str) -> Explanation:
    path = match.group(1)
    name = re.split(r"[\\/]+", path)[-1]
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
        r"Error loading \\*\"(.+?\.dll)\\*\" or one of its dependencies",
        _windows_dll,
    ),
]
