"""Known errors of building a compiled extension (at ``pip install`` or at run time, as DeepSpeed's
op builder and torch.utils.cpp_extension's ``load`` do): the tools the build needs are missing or
too new. A torch wheel carries the CUDA runtime only, not the compiler: an extension with CUDA
code needs the CUDA toolkit (nvcc) of the same major version, and nvcc accepts host compilers up
to a version per release; on Windows, pip needs Microsoft's C++ build tools.
"""

from __future__ import annotations

import difflib
import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import frames, last_frame

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


def _no_arch_list(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="Building a CUDA extension where torch sees no GPU: no architecture to compile for",
        meaning=(
            "torch.utils.cpp_extension compiles for the GPU architectures in TORCH_CUDA_ARCH_LIST, or"
            " else for the GPUs it can see; it saw none, so the list was empty (IndexError in"
            " _get_cuda_arch_flags)."
        ),
        cause=(
            "The build runs where no GPU is visible to torch: a build machine or container without"
            " a GPU (docker build, a login node), CUDA_VISIBLE_DEVICES empty, or a CPU-only torch"
            " (the build log's 'No CUDA runtime is found')."
        ),
        fix=(
            "Name the architectures to build for: export TORCH_CUDA_ARCH_LIST=\"7.5;8.0;8.6\" (the"
            " GPUs it will run on; torch.cuda.get_device_capability() there), and check that the"
            " installed torch is a CUDA build (torch.version.cuda is not None); then build again."
        ),
    )


def _setup_command(match: re.Match[str], text: str) -> Explanation:
    command = match.group(1)
    close = difflib.get_close_matches(command, SETUP_COMMANDS, n=1, cutoff=0.6)
    return answer(
        title=f"setup.py has no command '{command}'",
        meaning=f"setuptools knows commands such as build_ext, develop and install; '{command}' is none of them.",
        cause=(
            f"'{command}' is a misspelling of '{close[0]}' (in the command or the instructions it was"
            " copied from)." if close else f"'{command}' is not a setuptools command."
        ),
        fix=(
            f"Run python setup.py {close[0]} ... (or pip install ., which builds it)." if close
            else "List the commands with python setup.py --help-commands, or install with pip install ."
        ),
    )


def _in_arch_flags(match: re.Match[str], text: str) -> bool:
    """The IndexError was raised in cpp_extension's _get_cuda_arch_flags (the frame above it)."""
    frame = last_frame(text, match.start())
    return frame is not None and frame.function == "_get_cuda_arch_flags"


SETUP_COMMANDS = ["build", "build_ext", "build_py", "develop", "install", "sdist", "bdist_wheel", "clean"]


KNOWN: list[KnownError] = [
    known(
        "cuda-arch-list-empty",
        r"IndexError: list index out of range",
        _no_arch_list,
        when=_in_arch_flags,
    ),
    known("setup-invalid-command", r"error: invalid command '(\w+)'", _setup_command),
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
