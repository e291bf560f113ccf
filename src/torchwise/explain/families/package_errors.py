"""Known errors of installing and building: pip finding no torch for this Python (or only the
old PyPI placeholder), a CUDA extension built with another CUDA toolkit than torch's, a compiled
module built for another Python, Windows refusing a DLL of the wrong architecture.

The message names what pip or the loader looked for; the lines around it (the index pip
searched, the versions it saw) decide which of the usual causes it is.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known

PREVIOUS_VERSIONS = "https://pytorch.org/get-started/previous-versions/"


def _no_distribution(match: re.Match[str], text: str) -> Explanation:
    requirement = match.group(1) or match.group(3)
    # pip prints "Could not find a version ... (from versions: ...)" above "No matching distribution"
    versions = (match.group(2) or fact(text, r"satisfies the requirement \S+ \(from versions: ([^)]*)\)") or "").strip()
    mirror = re.search(r"Looking in indexes: (\S+)", text)
    official = mirror is None or "download.pytorch.org" in mirror.group(0) or "pypi.org" in mirror.group(0)
    local = re.search(r"\+(cu\d+|cpu|rocm[\d.]+)$", requirement)
    base = re.search(r"==([\d.]+)\+", requirement)
    # the version exists for this Python (pip lists it, or lists nothing): only the +cuXXX build is missing
    listed = not versions or (base is not None and base.group(1) in re.split(r",\s*", versions))
    if local and listed and "download.pytorch.org" not in text:
        cause = (
            f"{requirement} is a build with a local version (+{local.group(1)}): PyTorch publishes"
            " those only on its own index, download.pytorch.org, never on PyPI, which pip searched"
            " (a requirements file that pins it without the index)."
        )
        fix = (
            f"Install it from PyTorch's index: pip install {requirement} --extra-index-url"
            f" https://download.pytorch.org/whl/{local.group(1)} (on a Python that release supports),"
            " then the rest of the requirements without the torch line."
        )
    elif not official:
        assert mirror is not None
        cause = (
            f"pip searched {mirror.group(1)}, a mirror or private index that has no {requirement}"
            " (pip also ignores an index served over plain http unless it is trusted)."
        )
        fix = (
            "Install torch from the official index: pip install torch --index-url"
            " https://download.pytorch.org/whl/cu126 (or /cpu), or from pypi.org."
        )
    elif versions in ("", "none"):
        cause = (
            f"No {requirement} wheel exists for this interpreter: a 32-bit Python (torch ships"
            " 64-bit wheels only), a Python newer than the torch releases (a new 3.x before torch"
            " publishes wheels for it) or older than they support, or an unsupported platform."
        )
        fix = (
            "Check the interpreter: python -c \"import sys, struct; print(sys.version,"
            " struct.calcsize('P') * 8)\"; install a 64-bit Python of a version torch supports"
            " (see pytorch.org/get-started), then pip install torch."
        )
    else:
        cause = (
            f"pip sees only {versions} for this platform: the version asked for was never"
            " published on that index for this Python and operating system (old releases and the"
            " +cuXXX builds are on download.pytorch.org, not PyPI)."
        )
        fix = (
            f"Pick a version that exists for your Python ({PREVIOUS_VERSIONS} lists the install"
            " command of each release, with its --index-url), or a Python that version supports."
        )
    return answer(
        title=f"pip found no distribution of {requirement}",
        meaning=f"pip looked for {requirement} and found no wheel it can install here.",
        cause=cause,
        fix=fix,
    )


def _toolkit_mismatch(match: re.Match[str], text: str) -> Explanation:
    local, torch_cuda = match.group(1), match.group(2)
    return answer(
        title=f"Building a CUDA extension with CUDA {local} for a torch built with CUDA {torch_cuda}",
        meaning=(
            f"torch.utils.cpp_extension found the CUDA toolkit {local} (nvcc, from CUDA_HOME,"
            f" CUDA_PATH or the PATH) while the installed torch was built with CUDA {torch_cuda};"
            " it refuses to build an extension with the other one."
        ),
        cause=(
            f"The machine's CUDA toolkit ({local}) is another version than torch's ({torch_cuda}):"
            " a system CUDA found before the one the environment should use (CUDA_HOME or"
            " CUDA_PATH set to it), or a torch wheel for another CUDA than the toolkit installed."
        ),
        fix=(
            f"Make the two agree: install the torch built for CUDA {local} (pip install torch"
            f" --index-url https://download.pytorch.org/whl/cuXXX), or point the build at a CUDA"
            f" {torch_cuda} toolkit (export CUDA_HOME=/usr/local/cuda-{torch_cuda}; unset a"
            " CUDA_PATH that names another one; conda install cuda-toolkit of that version)."
        ),
    )


def _python_symbol(match: re.Match[str], text: str) -> Explanation:
    symbol = match.group(1)
    return answer(
        title=f"A compiled module needs {symbol}, which this Python does not have",
        meaning=(
            f"The module's .so was linked against a Python that provides {symbol}; the running"
            " interpreter does not export it."
        ),
        cause=(
            "The wheel was built for another Python release than the one running it: a newer patch"
            " release (symbols such as _PySlice_AdjustIndices first appeared in 3.6.1), or another"
            " minor version whose ABI differs."
        ),
        fix=(
            "Upgrade this Python to the latest patch release of its version (or to the version the"
            " wheel names), or install the wheel built for this exact Python."
        ),
    )


def _not_valid_application(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="Windows cannot load torch's DLL: not a valid application for this Python",
        meaning=(
            "'DLL load failed: %1 is not a valid Win32 application' (in any language): the DLL is"
            " built for another architecture than the Python process, or is damaged."
        ),
        cause=(
            "A 32-bit Python loading torch's 64-bit DLLs, or a broken or incomplete install of"
            " torch (an interrupted download, files of two installs mixed)."
        ),
        fix=(
            "Check the interpreter (python -c \"import struct; print(struct.calcsize('P') * 8)\" must"
            " print 64); install 64-bit Python if not, then reinstall torch: pip install"
            " --force-reinstall torch --index-url https://download.pytorch.org/whl/cpu (or cuXXX)."
        ),
    )


def _pypi_placeholder(match: re.Match[str], text: str) -> Explanation:
    python = re.search(r"python ?(2\.7|3\.\d+)|py(2\d|3\d+)|cp(\d)(\d+)", text, re.IGNORECASE)
    seen = ""
    if python:
        version = python.group(1) or python.group(2) or f"{python.group(3)}.{python.group(4)}"
        seen = f" (the paste shows Python {version})"
    return answer(
        title="pip installed the old 'torch' placeholder from PyPI (0.1.2), not PyTorch",
        meaning=(
            "The 'torch' 0.1.2 package on PyPI is a placeholder from before PyTorch published"
            " wheels there: its setup.py only raises this message. pip falls back to it when no"
            " real torch wheel fits the interpreter."
        ),
        cause=(
            "No torch wheel exists for this interpreter or platform" + seen + ": Python 2.7, a"
            " 32-bit Python, a Python version newer or older than the torch releases support, or"
            " an unsupported platform, so pip picked the placeholder's source package."
        ),
        fix=(
            "Use a 64-bit Python 3 of a version torch supports (python -c \"import sys, struct;"
            " print(sys.version, struct.calcsize('P') * 8)\"), then run the install command"
            " pytorch.org/get-started gives for it (pip install torch, with its --index-url)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "pypi-placeholder",
        r"PyTorch does not currently provide packages for PyPI",
        _pypi_placeholder,
    ),
    known(
        "no-matching-distribution",
        r"Could not find a version that satisfies the requirement ((?:torch|torchvision|torchaudio)[\w.=<>!~,+*-]*)"
        r"(?: \(from versions: ([^)]*)\))?"
        r"|No matching distribution found for ((?:torch|torchvision|torchaudio)[\w.=<>!~,+*-]*)",
        _no_distribution,
    ),
    known(
        "extension-cuda-mismatch",
        r"The detected CUDA version \(([\d.]+)\) mismatches the version that was used to compile"
        r"\s+PyTorch \(([\d.]+)\)",
        _toolkit_mismatch,
    ),
    known("python-symbol", r"(?:Symbol not found|undefined symbol): (_?Py[A-Z]\w+)", _python_symbol),
    known(
        "dll-not-valid-application",
        r"DLL load failed[^\n]*%1",
        _not_valid_application,
    ),
]
