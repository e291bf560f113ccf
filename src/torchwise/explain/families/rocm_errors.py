"""Known errors of a ROCm torch whose libraries carry no code for this AMD GPU's architecture.

A ROCm wheel ships its GPU code per gfx target: rocBLAS's Tensile kernels as one
``TensileLibrary*.dat`` per architecture under ``torch/lib/rocblas/library``, and every other kernel
as code objects inside the libraries. On a GPU whose target is not in the wheel's list (most
consumer Radeon cards and APUs), rocBLAS cannot read a Tensile library for it ("Cannot read
.../TensileLibrary.dat", "Could not load .../TensileLibrary_lazy_gfx1032.dat") and HIP finds no code
object ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"). The same
advice as ``hip-invalid-device-function`` applies: report a supported target in its place.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known


def _no_code_for_gpu(match: re.Match[str], text: str) -> Explanation:
    gfx = fact(text, r"\b(gfx\d{3,4}\w?)\b")
    # RDNA3 (gfx11xx: Navi 3x, Radeon RX 7000) takes 11.0.0, RDNA2 (gfx103x: Navi 2x, RX 6000) 10.3.0
    rdna3 = (gfx or "").startswith("gfx11") or re.search(r"Navi 3\d|RX 7\d{3}", text)
    override = "11.0.0" if rdna3 else "10.3.0"
    named = f" ({gfx})" if gfx else ""
    tensile = "TensileLibrary" in match.group(0)
    return answer(
        title=f"The ROCm build of torch has no {'rocBLAS kernels' if tensile else 'code'} for this AMD GPU{named}",
        meaning=(
            "rocBLAS looks for the Tensile kernel library of the GPU's architecture (gfx target) in"
            " torch/lib/rocblas/library and could not read one"
            if tensile
            else "HIP found no code object for the GPU's architecture (gfx target) in the loaded libraries"
        )
        + "; it fails on the first matrix multiply or kernel, whatever the model.",
        cause=(
            f"The GPU{named} is not among the gfx targets this ROCm torch was built for: the official"
            " wheels list the data-centre and a few workstation/high-end Radeon targets, and most"
            " consumer Radeon cards and APUs (RX 6600/6700 gfx1031/1032, RX 7600 gfx1102, 780M"
            " gfx1103) are not in them. Less often the rocblas library folder is incomplete (an"
            " interrupted install)."
        ),
        fix=(
            "Tell ROCm to use the nearest supported target: export"
            f" HSA_OVERRIDE_GFX_VERSION={override} (10.3.0 for RDNA2 cards, 11.0.0 for RDNA3) in the"
            " shell before Python starts; or install a torch/ROCm build that lists this GPU"
            " (rocminfo | grep gfx shows its target); if the target is supported, reinstall torch so"
            " torch/lib/rocblas/library is complete."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "rocm-no-code-for-gpu",
        # the Tensile library's path is the message's subject, whatever the prefix a paste keeps
        r"(?:Cannot read|Could not load|Cannot open|Could not open) \S*[\\/]TensileLibrary\S*"
        r"|hipErrorNoBinaryForGpu|Unable to find code object for all current devices",
        _no_code_for_gpu,
    ),
]
