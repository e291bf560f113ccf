"""Known errors of compiling a model with torch.jit.script: Python constructs TorchScript's
compiler does not take, pointed at by the source location the message prints.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import LIBRARY

# Where TorchScript points: 'File "x.py", line 75' (newer torch) or 'at /path/x.py:251:8' (older).
LOCATION = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)|\bat (?P<file2>\S+\.py):(?P<line2>\d+)')


def _location(text: str, after: int) -> tuple[str, str, bool] | None:
    """The file name, line and whether it is installed code, of the location printed after the message."""
    found = LOCATION.search(text, after)
    if not found:
        return None
    path = found.group("file") or found.group("file2")
    return re.split(r"[\\/]", path)[-1], found.group("line") or found.group("line2"), bool(LIBRARY.search(path))


def _builtin(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1)
    location = _location(text, match.end())
    where = f" ({location[0]}, line {location[1]})" if location else ""
    device = name == "next" and ".parameters(" in text[match.end():]
    if location and location[2]:
        cause = (
            f"The call to {name}() is in installed code ({location[0]}) that the scripted model"
            " reaches: that function of this torch (or library) release cannot be scripted,"
            " whatever the model's own code does."
        )
        fix = (
            "Upgrade torch (or the library), whose later releases script it; or keep that call"
            " out of the scripted code (call it outside, or mark the calling method"
            " @torch.jit.ignore), or export by tracing instead (torch.jit.trace, torch.export)."
        )
    else:
        cause = f"Code that torch.jit.script compiles calls {name}()" + (
            ": here next(self.parameters()) to find the model's device, a common Python idiom"
            " TorchScript cannot compile." if device else "."
        )
        fix = (
            "Export by tracing instead (torch.jit.trace(model, example_inputs), Lightning's"
            " to_torchscript(method='trace', example_inputs=...), or torch.export), or rewrite"
            " that code for TorchScript"
            + (" (read the device from an input tensor, x.device)" if device else "")
            + ", or keep it out of the compiled path with @torch.jit.unused / @torch.jit.ignore."
        )
    return answer(
        title=f"TorchScript cannot compile the Python builtin {name}(){where}",
        meaning=(
            "torch.jit.script compiles the model's code into TorchScript, which supports only a"
            f" subset of Python; the builtin {name}() is not part of it."
        ),
        cause=cause,
        fix=fix,
    )


def _unknown_op(match: re.Match[str], text: str) -> Explanation:
    namespace, op = match.group(1), match.group(2)
    cpp = re.search(r"C\+\+|libtorch|torch::jit::load|\.cpp\b", text) is not None
    return answer(
        title=f"TorchScript does not know the operator {namespace}::{op}: {namespace}'s ops are not loaded",
        meaning=(
            f"The scripted code calls torch.ops.{namespace}.{op}, an operator that a library"
            f" ({namespace}) registers when its compiled part is loaded; none is registered in this process."
        ),
        cause=(
            f"The program that loads or runs the model never loaded {namespace}'s library: a C++"
            f" program not linked against lib{namespace} (or whose linker dropped it as unused)"
            if cpp
            else f"{namespace} was not imported before the model was scripted or loaded (import"
            f" {namespace} registers its ops), or its compiled part failed to load (a build for"
            " another torch)"
        )
        + ".",
        fix=(
            f"Link the C++ program against {namespace}'s library and make sure it loads (find_package"
            f" and target_link_libraries for TorchVision; on Linux link it with -Wl,--no-as-needed, or"
            f" include its header so its ops register) before torch::jit::load."
            if cpp
            else f"import {namespace} before torch.jit.script / torch.jit.load, and check that"
            f" {namespace} matches the installed torch (its version table)."
        ),
    )


def _variadic(match: re.Match[str], text: str) -> Explanation:
    function = match.group("function") or "the function"
    return answer(
        title=f"TorchScript cannot compile {function}: it takes *args or **kwargs",
        meaning=(
            "torch.jit.script compiles each function the model calls, and TorchScript functions"
            " take a fixed list of typed arguments: no *args, **kwargs or keyword-only arguments"
            " with defaults."
        ),
        cause=f"The scripted model calls {function}, whose signature takes a variable number of arguments.",
        fix=(
            "Call a scriptable form instead (a module of the library, such as"
            " einops.layers.torch.Rearrange, built in __init__), or give the function a fixed"
            " signature; or keep it out of the compiled code (@torch.jit.ignore) or export by"
            " tracing (torch.jit.trace, torch.export)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "torchscript-variadic",
        r"(?P<message>Compiled functions can't take variable number of arguments)"
        r"|def (?P<function>\w+)\([^\n]*\*\*?\w+[^\n]*\n\s*~+\s*<--- HERE",
        _variadic,
    ),
    known("torchscript-unknown-op", r"Unknown builtin op: (\w+)::(\w+)", _unknown_op),
    known(
        "torchscript-builtin",
        r"Python builtin <built-in (?:function|method) (\w+)[^>]*> is currently not supported in Torchscript",
        _builtin,
    ),
]
