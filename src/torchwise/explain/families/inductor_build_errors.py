"""Known errors of torch.compile's inductor when the machine's C++ compiler cannot build its code.

For CPU tensors (and for its wrapper code on GPU) inductor writes C++ and compiles it at run time
with the host's compiler: g++/clang++ on Linux and macOS, MSVC's cl.exe on Windows, with Python's
headers and OpenMP. When that step fails it raises ``CppCompileError: C++ compile error`` (inside
``InductorError`` or ``BackendCompilerFailed``), followed by the command and the compiler's own output;
the first compiler error line, where the paste keeps it, says which part of the toolchain is missing.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

EAGER = (
    "To run meanwhile without it, compile with another backend (torch.compile(model,"
    " backend='aot_eager')) or do not compile on this machine."
)


def _toolchain(text: str) -> tuple[str, str]:
    """What the compiler's output in the paste says is missing: (cause, fix)."""
    if re.search(r"Python\.h: No such file|Python\.h' file not found", text):
        return (
            "Python's development headers are not installed: the compiler cannot find Python.h.",
            "Install them for this Python (apt install python3-dev / python3.X-dev, dnf install"
            " python3-devel; a conda Python has them).",
        )
    if re.search(r"omp\.h['\"]? (?:file not found|: No such file)|-fopenmp|libomp", text):
        return (
            "The compiler has no OpenMP: Apple's clang ships without it (omp.h not found).",
            "brew install libomp (macOS), or install a compiler with OpenMP (conda install -c"
            " conda-forge llvm-openmp).",
        )
    windows = re.search(r"\bcl(?:\.exe)?\b|MSVC|Visual Studio|vcvars|\bWindows\b|[A-Z]:\\", text)
    if windows:
        return (
            "On Windows inductor compiles with MSVC's cl.exe, and the process has no working MSVC"
            " environment (the Visual Studio C++ build tools missing, or Python started outside a"
            " Developer/x64 Native Tools prompt, as Jupyter and IDEs are).",
            "Install Visual Studio's 'Desktop development with C++' build tools and start Python"
            " (or Jupyter) from an 'x64 Native Tools Command Prompt for VS', so cl.exe and its"
            " INCLUDE/LIB are set.",
        )
    if re.search(
        r"(?:g\+\+|c\+\+|gcc|clang\+\+)['\"]?:? (?:not found|No such file or directory)|command not found", text
    ):
        return (
            "No C++ compiler is installed (g++/clang++ not found).",
            "Install one: apt install g++ (build-essential), or set CXX to a working compiler.",
        )
    return (
        "The C++ toolchain inductor calls is missing or broken for this Python: no compiler"
        " (MSVC's cl.exe outside a Developer prompt on Windows, no g++/clang++ on Linux), or it"
        " lacks Python's headers or OpenMP (macOS clang). The compiler's own error lines, printed"
        " under this message, name which.",
        "Read the first error line of the compiler output under the message; install the missing"
        " part (Windows: Visual Studio's C++ build tools and a Developer prompt; Linux: g++ and"
        " python3-dev; macOS: Xcode command line tools and brew install libomp).",
    )


def _cpp_compile(match: re.Match[str], text: str) -> Explanation:
    cause, fix = _toolchain(text)
    return answer(
        title="torch.compile could not build its generated C++: the machine's compiler failed",
        meaning=(
            "Inductor (torch.compile's default backend) compiles C++ it generates for the model with"
            " the host's C++ compiler at run time; that compile step failed, so nothing ran."
        ),
        cause=cause,
        fix=f"{fix} {EAGER}",
    )


KNOWN: list[KnownError] = [
    known("inductor-cpp-compile", r"CppCompileError:?\s*C\+\+ compile error", _cpp_compile),
]
