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


KNOWN: list[KnownError] = [
    known(
        "torchscript-builtin",
        r"Python builtin <built-in (?:function|method) (\w+)[^>]*> is currently not supported in Torchscript",
        _builtin,
    ),
]
