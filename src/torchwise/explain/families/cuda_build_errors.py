"""Known errors of a torch build without CUDA asked for a CUDA device: a CPU-only wheel, or a Mac,
whose torch never has CUDA. Split from ``setup_errors`` (which holds the rest of the install, the
driver and the checkpoint files); ``lookup.KNOWN`` keeps it in that family's place.

What the paste shows of the machine decides the reading: on a Mac (its paths, its name, Apple
silicon, MPS) "install a CUDA build" cannot help, and the device is the fix.
"""

from __future__ import annotations

import re

from torchwise.env.compat import WHEEL_INDEX
from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.families.setup_errors import DOCTOR

# What a paste shows of a Mac: macOS's home folders (/Users/name, not Windows' C:\Users), its
# system's names, Apple silicon, Homebrew's prefix, the MPS backend in the user's code.
MAC = re.compile(
    r"(?:^|[\s\"'(=])/Users/\w+|\bmacOS\b|\bDarwin\b|\bMacBook|\bMac (?:mini|Studio|Pro)\b|\bApple M[1-9]\b"
    r"|\bM[1-9] (?:Pro|Max|Ultra|chip)\b|/opt/homebrew/|torch\.backends\.mps\b|device=['\"]mps['\"]"
)
# The device a Mac has, where the code picks one.
MAC_DEVICE_FIX = (
    "Use the Mac's GPU or the CPU where the device is chosen: device = 'mps' if"
    " torch.backends.mps.is_available() else 'cpu' (and .to(device) instead of .cuda());"
    " a tool with a device setting wants 'mps' or 'cpu' there."
)


def on_a_mac(text: str) -> str | None:
    """What in the paste shows a Mac, or None."""
    found = MAC.search(text)
    return found.group(0).strip(" \"'(=") if found else None


def _not_compiled(match: re.Match[str], text: str) -> Explanation:
    mac = on_a_mac(text)
    if mac:
        cause = (
            f"This is a Mac (the paste shows {mac}): torch for macOS has no CUDA at all, and the code"
            " (or a config, a library default) asks for a 'cuda' device."
        )
        fix = MAC_DEVICE_FIX
    else:
        cause = (
            "pip installed the CPU wheel: the default on Windows and macOS, or from the /whl/cpu"
            " index; or the code hard-codes 'cuda' on a machine without an NVIDIA GPU."
        )
        fix = (
            "With an NVIDIA GPU install a CUDA build:\n"
            f"    pip install --force-reinstall torch --index-url {WHEEL_INDEX}/cu128\n"
            f"{DOCTOR} Without one, choose the device in code:\n"
            "    device = 'cuda' if torch.cuda.is_available() else 'cpu'  # 'mps' on a Mac"
        )
    return answer(
        title="This torch is a CPU-only build",
        meaning="The code asked for CUDA (.cuda(), device='cuda') but the installed wheel has none.",
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known("torch-not-compiled-with-cuda", r"Torch not compiled with CUDA enabled", _not_compiled),
]
