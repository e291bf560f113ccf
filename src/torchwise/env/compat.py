"""What belongs with what: torch and its companion packages, CUDA builds, drivers, GPU archs.

Pure data and pure functions (no torch import), so every rule can be tested with plain values.
The tables come from the PyTorch release compatibility matrix and the CUDA toolkit release
notes (Linux driver numbers; Windows drivers are numbered differently).

>>> companion_version("torchvision", "2.5.1+cu124")
'0.20'
>>> cuda_from_driver_code(11040)
(11, 4)
>>> pip_install_torch("2.5.1+cpu", cuda=(12, 4))
'pip install --force-reinstall torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124'
"""

from __future__ import annotations

import re

Version = tuple[int, ...]

WHEEL_INDEX = "https://download.pytorch.org/whl"

# torch (major, minor) -> torchvision / torchaudio (major, minor) released with it.
TORCHVISION_FOR_TORCH: dict[Version, Version] = {
    (1, 4): (0, 5),
    (1, 5): (0, 6),
    (1, 6): (0, 7),
    (1, 7): (0, 8),
    (1, 8): (0, 9),
    (1, 9): (0, 10),
    (1, 10): (0, 11),
    (1, 11): (0, 12),
    (1, 12): (0, 13),
    (1, 13): (0, 14),
    (2, 0): (0, 15),
    (2, 1): (0, 16),
    (2, 2): (0, 17),
    (2, 3): (0, 18),
    (2, 4): (0, 19),
    (2, 5): (0, 20),
    (2, 6): (0, 21),
    (2, 7): (0, 22),
    (2, 8): (0, 23),
    (2, 9): (0, 24),
    (2, 10): (0, 25),
}
TORCHAUDIO_FOR_TORCH: dict[Version, Version] = {
    (1, 10): (0, 10),
    (1, 11): (0, 11),
    (1, 12): (0, 12),
    (1, 13): (0, 13),
    **{(2, minor): (2, minor) for minor in range(0, 11)},
}

# torch (major, minor) -> the CUDA versions it is published for on download.pytorch.org.
CUDA_BUILDS: dict[Version, tuple[Version, ...]] = {
    (2, 0): ((11, 7), (11, 8)),
    (2, 1): ((11, 8), (12, 1)),
    (2, 2): ((11, 8), (12, 1)),
    (2, 3): ((11, 8), (12, 1)),
    (2, 4): ((11, 8), (12, 1), (12, 4)),
    (2, 5): ((11, 8), (12, 1), (12, 4)),
    (2, 6): ((11, 8), (12, 4), (12, 6)),
    (2, 7): ((11, 8), (12, 6), (12, 8)),
    (2, 8): ((12, 6), (12, 8), (12, 9)),
    (2, 9): ((12, 6), (12, 8), (13, 0)),
    (2, 10): ((12, 6), (12, 8), (13, 0)),
}

# Oldest Linux driver that runs each CUDA version natively (CUDA toolkit release notes, table 3).
MIN_DRIVER_FOR_CUDA: dict[Version, str] = {
    (11, 7): "515.43.04",
    (11, 8): "520.61.05",
    (12, 1): "530.30.02",
    (12, 4): "550.54.14",
    (12, 6): "560.28.03",
    (12, 8): "570.26",
    (12, 9): "575.51.03",
    (13, 0): "580.65.06",
}
# Since CUDA 11 a build for X.y also runs on an older X.z driver ("minor version
# compatibility") as long as the driver is at least this one for major X.
MINOR_COMPAT_MIN_DRIVER: dict[int, str] = {11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}


def parse_version(text: str) -> Version:
    """``"2.5.1+cu124"`` -> ``(2, 5, 1)``; ``"12.4"`` -> ``(12, 4)``; stops at a non-number."""
    numbers = re.match(r"\d+(?:\.\d+)*", text.strip())
    if numbers is None:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(part) for part in numbers.group(0).split("."))


def local_tag(version: str) -> str:
    """The build flavour after ``+``: ``"cu124"``, ``"cpu"``, ``"rocm6.2"``, or ``""``."""
    return version.partition("+")[2]


def public_version(version: str) -> str:
    return version.partition("+")[0]


def cuda_tag(cuda: Version) -> str:
    return f"cu{cuda[0]}{cuda[1]}"


def format_version(version: Version) -> str:
    return ".".join(str(part) for part in version)


def cuda_from_driver_code(code: int) -> Version:
    """The CUDA version a driver reports as an integer (``11040`` -> ``(11, 4)``)."""
    return (code // 1000, (code % 1000) // 10)


def companion_version(package: str, torch_version: str) -> str | None:
    """The ``major.minor`` of torchvision/torchaudio that belongs with this torch.

    Releases newer than the table follow the rule every 2.x release has kept: torchvision
    0.(minor + 15), torchaudio 2.minor.
    """
    major, minor = parse_version(torch_version)[:2]
    table = TORCHVISION_FOR_TORCH if package == "torchvision" else TORCHAUDIO_FOR_TORCH
    pair = table.get((major, minor))
    if pair is None and major == 2:
        pair = (0, minor + 15) if package == "torchvision" else (2, minor)
    return format_version(pair) if pair else None


def cuda_builds_for(torch_version: str) -> tuple[Version, ...]:
    """CUDA versions published for this torch; releases newer than the table get its last row."""
    key = parse_version(torch_version)[:2]
    if key in CUDA_BUILDS:
        return CUDA_BUILDS[key]
    newest = max(CUDA_BUILDS)
    return CUDA_BUILDS[newest] if key > newest else ()


def driver_runs_cuda(
    build_cuda: Version, *, driver_cuda: Version, driver_version: str | None
) -> bool:
    """Whether a driver that reports ``driver_cuda`` can run a build for ``build_cuda``."""
    if build_cuda[:2] <= driver_cuda[:2]:
        return True
    if build_cuda[0] != driver_cuda[0] or driver_version is None:
        return False
    floor = MINOR_COMPAT_MIN_DRIVER.get(build_cuda[0])
    return floor is not None and parse_version(driver_version) >= parse_version(floor)


def arch_cuda_range(capability: Version) -> tuple[Version | None, Version | None]:
    """The oldest and newest CUDA whose PyTorch wheels carry kernels for this GPU.

    Blackwell (10.x, 12.x) needs CUDA 12.8; Hopper and Ada need 11.8. PyTorch's CUDA 12.8+
    wheels dropped Maxwell and Pascal (< 7.0), CUDA 13 dropped Volta (< 7.5).
    """
    if capability >= (10, 0):
        return (12, 8), None
    if capability >= (8, 9):
        return (11, 8), None
    if capability >= (7, 5):
        return None, None
    if capability >= (7, 0):
        return None, (12, 9)
    if capability >= (5, 0):
        return None, (12, 6)
    return None, (0, 0)  # Kepler and older: no current wheel at all


def arch_list_covers(arch_list: list[str], capability: Version) -> bool:
    """Whether kernels in ``arch_list`` (``torch.cuda.get_arch_list()``) run on ``capability``.

    A cubin for sm_XY runs on X.Z with Z >= Y (same major); PTX (compute_XY) is compiled by
    the driver for any GPU at least X.Y. The ``a``/``f`` variants (sm_90a) run only on that GPU.
    """
    for arch in arch_list:
        match = re.fullmatch(r"(sm|compute)_(\d+)(\d)([af]?)", arch)
        if match is None:
            continue
        kind, major, minor, suffix = match.groups()
        built = (int(major), int(minor))
        if kind == "compute" and built <= capability:
            return True
        if kind == "sm" and suffix and built == capability:
            return True
        if kind == "sm" and not suffix and built[0] == capability[0] and built[1] <= capability[1]:
            return True
    return False


def pick_cuda_build(
    torch_version: str,
    *,
    driver_cuda: Version | None = None,
    driver_version: str | None = None,
    capability: Version | None = None,
) -> tuple[str, Version] | None:
    """The (torch version spec, CUDA version) to install, preferring the installed torch.

    Within one torch release the newest CUDA that the driver runs natively wins, else the
    oldest one it runs through minor-version compatibility. When no build of this release
    fits, the newest release in the table that has one is named (as ``"2.7.*"``).
    """

    def fits(cuda: Version) -> bool:
        low, high = arch_cuda_range(capability) if capability else (None, None)
        if (low and cuda < low) or (high and cuda > high):
            return False
        if driver_cuda is None:
            return True
        return driver_runs_cuda(cuda, driver_cuda=driver_cuda, driver_version=driver_version)

    def best(candidates: tuple[Version, ...]) -> Version | None:
        usable = [cuda for cuda in candidates if fits(cuda)]
        native = [cuda for cuda in usable if driver_cuda is None or cuda <= driver_cuda]
        if native:
            return max(native)
        # Through minor-version compatibility: the build closest to the driver risks least.
        return min(usable, default=None)

    installed = public_version(torch_version)
    chosen = best(cuda_builds_for(installed))
    if chosen is not None:
        return installed, chosen
    for release in sorted(CUDA_BUILDS, reverse=True):
        chosen = best(CUDA_BUILDS[release])
        if chosen is not None:
            return f"{format_version(release)}.*", chosen
    return None


def pip_install_torch(torch_version: str, *, cuda: Version) -> str:
    """The exact pip command for ``torch==version`` built for ``cuda``."""
    requirement = f"torch=={public_version(torch_version)}"
    if "*" in requirement:  # quoted so the shell does not expand it
        requirement = f'"{requirement}"'
    return f"pip install --force-reinstall {requirement} --index-url {WHEEL_INDEX}/{cuda_tag(cuda)}"
