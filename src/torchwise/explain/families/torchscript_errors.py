"""Known errors of compiling a model with torch.jit.script: Python constructs TorchScript's
compiler does not take, pointed at by the source location the message prints.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _where(text: str, after: int) -> str:
    """'model.py, line 75' from the source location TorchScript prints under its message."""
    found = re.compile(r'File "([^"]+)", line (\d+)').search(text, after)
    if not found:
        return ""
    name = re.split(r"[\\/]", found.group(1))[-1]
    return f" ({name}, line {found.group(2)})"


def _builtin(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1)
    where = _where(text, match.end())
    device = name == "next" and ".parameters(" in text[match.end():]
    return answer(
        title=f"TorchScript cannot compile the Python builtin {name}(){where}",
        meaning=(
            "torch.jit.script compiles the model's code into TorchScript, which supports only a"
            f" subset of Python; the builtin {name}() is not part of it."
        ),
        cause=(
            f"Code that torch.jit.script compiles calls {name}()"
            + (": here next(self.parameters()) to find the model's device, a common Python idiom"
               " TorchScript cannot compile." if device else ".")
        ),
        fix=(
            "Export by tracing instead (torch.jit.trace(model, example_inputs), Lightning's"
            " to_torchscript(method='trace', example_inputs=...), or torch.export), or rewrite"
            " that code for TorchScript"
            + (" (read the device from an input tensor, x.device)" if device else "")
            + ", or keep it out of the compiled path with @torch.jit.unused / @torch.jit.ignore."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "torchscript-builtin",
        r"Python builtin <built-in (?:function|method) (\w+)[^>]*> is currently not supported in Torchscript",
        _builtin,
    ),
]
