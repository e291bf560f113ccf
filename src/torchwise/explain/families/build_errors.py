"""Known errors of building a compiled extension (at ``pip install`` or at run time, as DeepSpeed's
op builder and torch.utils.cpp_extension's ``load`` do): the tools the build needs are missing or
too new. A torch wheel carries the CUDA runtime only, not the compiler: an extension with CUDA
code needs the CUDA toolkit (nvcc) of the same major version, and nvcc accepts host compilers up
to a version per release; on Windows, pip needs Microsoft's C++ build tools.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import frames

TORCH_CUDA = 'python -c "import torch; print(torch.version.cuda)"'


def _builder(match: re.Match[str], text: str) -> str:
    """The package that was building: the installed package of the frame above, else a name in the message."""
    packages = [frame.package for _, frame in frames(text[: match.start()]) if frame.package not in (None, "torch")]
    line_start = text.rfind("\n", 0, match.start()) + 1
    raised = re.match(r"\s*([a-z_]\w*)\.[\w.]*(?:Error|Exception):", text[line_start : match.start()])
    return packages[-1] if packages else raised.group(1) if raised else "the extension"


def _toolkit_missing(match: re.Match[str], text: str) -> Explanation:
    builder = _builder(match, text)
    return answer(
        title=f"No CUDA toolkit to compile {builder}'s CUDA code with (CUDA_HOME / nvcc not found)",
        meaning=(
            f"{builder} compiles C++/CUDA code (when installed, or when an op is first used) and"
            " looks for the CUDA compiler nvcc under CUDA_HOME (or /usr/local/cuda); there is none."
        ),
        cause=(
            "The machine has the CUDA runtime that the torch wheel brings (and the driver), but"
            " not the CUDA toolkit, which only a build needs; or the toolkit is installed where"
            " CUDA_HOME does not point."
        ),
        fix=(
            f"Install the CUDA toolkit of torch's CUDA version ({TORCH_CUDA}), e.g. conda install -c"
            " nvidia cuda-toolkit=<that version> or NVIDIA's installer, and export"
            " CUDA_HOME=/usr/local/cuda-<that version> before installing or running; or install a"
            f" prebuilt wheel of {builder} made for this torch and CUDA (nothing is compiled then)."
            " If that prints None, this torch is a CPU-only build: install a CUDA build of torch first."
        ),
    )


def _host_compiler_too_new(match: re.Match[str], text: str) -> Explanation:
    newest = match.group(1)
    return answer(
        title=f"nvcc refuses this gcc: versions later than {newest} are not supported",
        meaning=(
            "The CUDA compiler nvcc calls the system's C++ compiler for the host code, and each"
            f" CUDA release accepts gcc only up to a version; this one up to gcc {newest}."
        ),
        cause=(
            f"The default gcc is newer than {newest} (a recent distribution), older than the CUDA"
            " toolkit it is used with."
        ),
        fix=(
            f"Install gcc {newest} (or older) beside it and point the build at it: export"
            f" CC=gcc-{newest} CXX=g++-{newest} (and NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-{newest}'),"
            " then rebuild; or use a newer CUDA toolkit that accepts this gcc."
        ),
    )


def _build_tools_missing(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="pip is compiling a package on Windows without Microsoft's C++ build tools",
        meaning=(
            "No prebuilt wheel of a package (or one of its dependencies) fits this Python and"
            " platform, so pip builds it from source, which needs the Microsoft C++ compiler."
        ),
        cause=(
            "The package has no wheel for this Python version (often a Python newer than its"
            " releases), so pip fell back to the source archive; the compiler is not installed."
        ),
        fix=(
            "Use a Python version the package publishes wheels for (pip download <package>"
            " --only-binary :all: shows whether one exists), or install 'Microsoft C++ Build Tools'"
            " (the 'Desktop development with C++' workload) and run pip again."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "cuda-toolkit-missing",
        r"CUDA_HOME environment variable is not set"
        r"|CUDA_HOME does not exist, unable to compile CUDA op"
        r"|No such file or directory: '[^'\n]*[\\/]bin[\\/]nvcc'",
        _toolkit_missing,
    ),
    known(
        "nvcc-unsupported-gcc",
        r"unsupported GNU version! gcc versions later than (\d+) are not supported",
        _host_compiler_too_new,
    ),
    known(
        "msvc-build-tools-missing",
        r"Microsoft Visual C\+\+ 1\d\.\d or greater is required",
        _build_tools_missing,
    ),
]
