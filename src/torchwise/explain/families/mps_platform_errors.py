"""Known errors of the MPS backend refusing to start on this Mac.

torch checks the macOS release and its own build before using Apple's Metal backend: "The MPS
backend is supported on MacOS 12.3+. Current OS version can be queried using `sw_vers`" is raised
when a library (fastai, Lightning, a script choosing 'mps' because it exists) puts tensors on MPS
and this torch cannot use it on this macOS, whatever version the user believes they run.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _mps_os(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="This torch cannot use the MPS backend on this macOS",
        meaning=(
            "Tensors were put on the 'mps' device, and torch's check of the macOS release (12.3 or"
            " newer, and a build with MPS) failed, so it refused the device."
        ),
        cause=(
            "The code (or a library such as fastai or Lightning) picks 'mps' by default, while this"
            " torch/macOS combination cannot run it: macOS older than 12.3, an x86_64 Python (Rosetta)"
            " on Apple silicon, or a torch release whose version check misreads this macOS."
        ),
        fix=(
            "Run on the CPU explicitly (device='cpu': in fastai dls = ...dataloaders(path, device='cpu'),"
            " in Lightning accelerator='cpu'); or update macOS, and install an arm64 Python and a"
            " current torch (python -c 'import platform; print(platform.machine())' must say arm64)."
        ),
    )


KNOWN: list[KnownError] = [
    known("mps-os-unsupported", r"The MPS backend is supported on MacOS 12\.3\+", _mps_os),
]
