"""Known errors of the dynamic loader while importing torch or a compiled package: a shared
library (.so) or a Windows DLL that is not found, and what its name says it is (CUDA, OpenMP,
Python, a system library), with the package that needs it where the paste names one.
"""

from __future__ import annotations

import re

from torchwise.explain.evidence_readings import CUDA_DLL, cuda_dll, procedure_not_found
from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known, sentence, told_apart
from torchwise.explain.paste import frames, last_frame


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
    # round 9: the code and the DLL's name say what failed, which the missing-runtime reading assumes
    if re.search(r"WinError 127\b", text[line_start : match.end()]):
        return procedure_not_found(name)
    if CUDA_DLL.match(name):
        return cuda_dll(name, text)
    code = fact(text[line_start : match.end()], r"(\[WinError \d+\])") or "[WinError 126]"  # round 9: as printed
    return answer(
        title=f"Windows could not load {name} or a DLL it needs",
        meaning=(
            f"import torch loads {name} from torch\\lib; Windows could not load it or one of"
            f" the DLLs it depends on ({code})."
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
    package = fact(text, r"\b(torchvision|torchaudio|torchtext)\b")
    if package and re.match(r"lib(?:cu|nv)", library) and not re.search(r"[\\/]torch[\\/]", text):
        cause = (
            f"the {package} wheel was built for a CUDA whose runtime ({library}) this machine does"
            " not have: a CUDA build installed on a machine without that CUDA (or without a GPU)"
        )
        fix = (
            f"install the {package} build that matches the installed torch (the same CUDA, or the"
            f" CPU build on a machine without a GPU: pip install {package} --index-url"
            " https://download.pytorch.org/whl/cpu), in one command with torch"
        )
    owner = next((f.package for start, f in reversed(frames(text)) if start < match.start() and f.package), None)
    torch_own = ("torch", "torchvision", "torchaudio", "torchtext")
    if owner and owner not in torch_own and re.match(r"lib(?:cu|nv)", library):
        # round 8: the import that asked for it is another package's compiled part, not torch's
        cause = (
            f"{owner}'s compiled part (the import in the traceback) was built against a CUDA runtime"
            f" ({library}) that this machine does not have on its library path: a {owner} build for"
            " another CUDA than the installed torch's"
        )
        fix = (
            f"install the {owner} build made for the installed torch and its CUDA (python -c \"import"
            f" torch; print(torch.__version__, torch.version.cuda)\" shows them), or build {owner}"
            " from source against them"
        )
    return answer(
        title=f"A shared library is missing: {library}",
        meaning=(
            f"Importing a compiled module asked the dynamic loader for {library}, which is not"
            " on this machine (or not on its library path)."
        ),
        cause=sentence(cause),
        fix=sentence(fix),
    )


def _bitsandbytes_setup(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="bitsandbytes could not load its CUDA library",
        meaning=(
            "bitsandbytes ships one binary per CUDA version and looks for the CUDA runtime"
            " (libcudart) at import; it found a GPU but no binary or runtime that fits."
        ),
        cause=(
            "The installed bitsandbytes has no build for this CUDA runtime (an old release, or a"
            " CUDA newer than it knows), or libcudart is not on LD_LIBRARY_PATH (a conda CUDA, a"
            " container), or the machine is not Linux (old releases are Linux only)."
        ),
        fix=(
            "Run python -m bitsandbytes to see what it found; pip install -U bitsandbytes (a build"
            " for the installed CUDA), or add the CUDA lib folder to LD_LIBRARY_PATH (e.g."
            " $CONDA_PREFIX/lib); BNB_CUDA_VERSION=<version> selects a binary explicitly."
        ),
    )

def _extension_dll(match: re.Match[str], text: str) -> Explanation | None:
    """"DLL load failed while importing _C" raised in another package than torch: that package's
    compiled module; torch's own DLLs are the windows-dll reading, and without a frame the
    message does not say whose module it was."""
    frame = last_frame(text, match.start())
    package = frame.package if frame else None
    if package in (None, "torch"):
        return None
    module = match.group(1) or "its compiled module"
    return answer(
        title=f"Windows could not load {package}'s compiled module {module}",
        meaning=(
            f"{package} imports {module}, a DLL built from its C++/CUDA code; Windows could not load it"
            " or a DLL it links to (torch's, CUDA's, or the Visual C++ runtime)."
        ),
        cause=(
            f"{package}'s compiled module was built for another torch, CUDA or Python than the ones"
            " installed (a prebuilt wheel for other versions, or torch upgraded after it was built),"
            " so the DLLs it was linked against are not the ones here."
        ),
        fix=(
            f"Build {package} from source against the installed torch (in its folder, from a shell with"
            " the MSVC build tools and the CUDA toolkit of torch's CUDA: pip install -e ."
            " --no-build-isolation), or install the wheel made for exactly this torch, CUDA and Python."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart(
        "extension-dll-load-failed",
        r"DLL load failed while importing (\w+)(?![^\n]*%1)",
        _extension_dll,
    ),
    known(
        "windows-dll",
        # after round 9: a user's sentence may retell the path without the quotes OSError prints
        r"Error loading \\*\"?([^\"\n]+?\.dll)\\*\"? or one of its dependencies"
        r"|\[WinError 126\] The specified module could not be found(?!\. Error loading)()",
        _windows_dll,
    ),
    known(
        "shared-library-missing",
        r"(lib[\w.+-]*?\.so(?:\.[\d.]+)?): cannot open shared object file",
        _shared_library,
    ),
    known(
        "bitsandbytes-cuda-setup",
        r"CUDA Setup failed despite GPU being available",
        _bitsandbytes_setup,
    ),
]
