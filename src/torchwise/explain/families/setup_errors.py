"""Known errors that come from the install, the machine, or how a script is started.

Where the fix depends on what is installed (which torchvision belongs with this torch, which
CUDA build fits the driver), the installed versions are read from package metadata: torch is
never imported here.
"""

from __future__ import annotations

import pickletools
import re

from torchwise.env.compat import (
    MINOR_COMPAT_MIN_DRIVER,
    WHEEL_INDEX,
    arch_cuda_range,
    companion_version,
    cuda_from_driver_code,
    format_version,
    local_tag,
    pick_cuda_build,
    pip_install_torch,
)
from torchwise.env.probe import installed_version
from torchwise.explain.explanation import Explanation, KnownError, answer, known, sentence, told_apart
from torchwise.explain.families.gpu_arch_errors import torch_build_evidence
from torchwise.explain.stated_facts import matching_pair_reading, matching_pairs

DOCTOR = "torchwise doctor names the exact build for this machine."


# The first CUDA release that could build kernels for each architecture: a torch wheel built
# with an older CUDA cannot have them (the reason an old pinned torch fails on a new GPU).
FIRST_CUDA = {(8, 0): "11.0", (8, 6): "11.1", (8, 7): "11.4", (8, 9): "11.8", (9, 0): "11.8",
              (10, 0): "12.8", (12, 0): "12.8"}


def _capability(arch: str) -> tuple[int, int]:
    """``"sm_86"`` -> (8, 6), ``"sm_120"`` -> (12, 0)."""
    digits = re.sub(r"\D", "", arch)
    return int(digits[:-1]), int(digits[-1])


def _wheel_for(capability: tuple[int, int]) -> str:
    """The CUDA wheel index to name: the oldest that has this GPU when it is new, the newest
    that still has it when it is old, else the common default."""
    low, high = arch_cuda_range(capability)
    cuda = low or high or (12, 6)
    return f"cu{cuda[0]}{cuda[1]}"


def _no_kernel_image(match: re.Match[str], text: str) -> Explanation | None:
    gpu = re.search(r"([^\n:]*?) with CUDA capability (sm_\d+) is not compatible", text)
    listed = re.search(r"supports CUDA capabilities ((?:(?:sm|compute)_\d+\w? ?)+)", text)
    if gpu and listed:
        name, sm = gpu.group(1).strip() or "This GPU", gpu.group(2)
        archs = listed.group(1).split()
        capability = _capability(sm)
        built = sorted(_capability(arch) for arch in archs)
        wheel = _wheel_for(capability)
        if capability > built[-1]:
            first = FIRST_CUDA.get(capability)
            needs = f" a torch built with CUDA {first} or newer" if first else " a newer torch build"
            cause = (
                f"The build is older than the GPU: {sm} needs{needs}, and this one has kernels"
                f" up to {archs[-1]} only (an old torch pinned by a project, or a wheel for an old"
                " CUDA)."
            )
        else:
            cause = (
                f"The build dropped this GPU: {sm} is older than its oldest architecture"
                f" ({archs[0]}); recent CUDA wheels start at sm_70 or sm_75."
            )
        return answer(
            title=f"This torch build has no kernels for {sm} ({name}); it has {' '.join(archs)}",
            meaning=(
                f"CUDA wheels carry compiled kernels for a list of GPU architectures ({' '.join(archs)}"
                f" here). A kernel for sm_XY runs on GPUs X.Y and newer of the same major X, so"
                f" none of them runs on {sm}."
            ),
            cause=cause,
            fix=(
                f"Install a build whose list has {sm}:\n"
                f"    pip install --force-reinstall torch --index-url {WHEEL_INDEX}/{wheel}\n"
                "then check: python -c \"import torch; print(torch.cuda.get_arch_list())\"."
                f" A project that pins an old torch needs that pin raised. {DOCTOR}"
            ),
        )
    warned = gpu or not re.search(r"no kernel image", match.group(0))
    if warned or torch_build_evidence(match, text):
        # torch's own warning that its build lacks this GPU, a GPU that the common wheels leave
        # out, or a torch operation on the line that raised (its kernel is torch's own)
        return _no_build_kernels()
    # the bare message: torch's build or a compiled extension's (gpu_arch_errors reads the
    # extension where the frame shows it); the message alone does not say which
    return None


def _no_build_kernels() -> Explanation:
    return answer(
        title="This torch build has no GPU code for your GPU's architecture",
        meaning=(
            "CUDA wheels carry compiled kernels for a list of GPU architectures"
            " (torch.cuda.get_arch_list()); your GPU's compute capability is not among them."
        ),
        cause=(
            "A new GPU with an older build (RTX 50xx / B200, sm_100/sm_120, need a CUDA 12.8+"
            " build) or an old GPU with a newer build (GTX 10xx, sm_61, needs CUDA 12.6 or older)."
        ),
        fix=(
            "Compare the GPU with the architectures in the build:\n"
            '    python -c "import torch; print(torch.cuda.get_device_capability(),'
            ' torch.cuda.get_arch_list())"\n'
            "then install a build that lists your sm_XY, e.g. for an RTX 50xx:\n"
            f"    pip install --force-reinstall torch --index-url {WHEEL_INDEX}/cu128\n"
            f"{DOCTOR}"
        ),
    )


def _driver_too_old(match: re.Match[str], text: str) -> Explanation:
    cuda = cuda_from_driver_code(int(match.group(1)))
    shown = format_version(cuda)
    torch_version = installed_version("torch") or "0"
    # A driver that reports CUDA X.y is at least the first driver of X, so minor-version
    # compatibility holds for any X.z build.
    build = pick_cuda_build(
        torch_version, driver_cuda=cuda, driver_version=MINOR_COMPAT_MIN_DRIVER.get(cuda[0])
    )
    instead = "."
    if build is not None:
        command = pip_install_torch(build[0], cuda=build[1])
        instead = f", or install the build that fits this driver:\n    {command}"
    return answer(
        title=f"The NVIDIA driver runs CUDA up to {shown}, older than this torch build needs",
        meaning=(
            f"The driver reports version {match.group(1)}, i.e. CUDA {shown}; this torch was built"
            " for a newer CUDA, so it cannot start the GPU."
        ),
        cause="The torch wheel was installed for a newer CUDA than the machine's driver supports.",
        fix=f"Update the NVIDIA driver (https://www.nvidia.com/Download/index.aspx){instead}",
    )


OPERATORS_MEANING = (
    "torchvision registers its C++ operators (nms, roi_align, ...) when it is imported;"
    " they failed to load, so the operator does not exist."
)


def _torchvision_ops(match: re.Match[str], text: str) -> Explanation:
    torch_version = installed_version("torch")
    vision_version = installed_version("torchvision")
    wanted = companion_version("torchvision", torch_version) if torch_version else None
    tag = local_tag(torch_version or "")
    index = f" --index-url {WHEEL_INDEX}/{tag}" if tag else ""
    installed = (
        f" Installed here: torch {torch_version}, torchvision {vision_version}."
        if torch_version and vision_version
        else ""
    )
    pin = f'"torchvision=={wanted}.*"' if wanted else "torchvision"
    title = f"torchvision's compiled operators do not load ({match.group(1) or match.group(2)})"
    if pairs := matching_pairs(text):  # after round 9: the paste names releases that belong together
        cause, fix = matching_pair_reading(pairs)
        return answer(title=title, meaning=OPERATORS_MEANING, cause=cause, fix=sentence(fix))
    return answer(
        title=title,
        meaning=(
            OPERATORS_MEANING + installed
        ),
        cause=(
            "torchvision was built for another torch release or build (CPU vs CUDA): usually"
            " torch was upgraded or reinstalled from another index without torchvision."
        ),
        fix=(
            "Install the torchvision that belongs with this torch (torchwise doctor checks the"
            f" pair):\n    pip install --force-reinstall --no-deps {pin}{index}"
        ),
    )


def _cuda_checkpoint_on_cpu(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A checkpoint saved on a GPU is loaded where CUDA is unavailable",
        meaning="torch.load restores each tensor to the device it was saved from, a GPU here.",
        cause="The file was saved with tensors on CUDA and this machine (or torch) has no CUDA.",
        fix=(
            "Tell torch.load where to put the tensors: torch.load(path, map_location='cpu'), or"
            " map_location=device for the device you train on."
        ),
    )


def _weights_only(match: re.Match[str], text: str) -> Explanation:
    operand = re.search(r"WeightsUnpickler error: Unsupported operand (\d+)", text)
    # the first byte, read as a pickle opcode; a byte that is no opcode at all says the file is
    # not a pickle (an opcode the weights-only unpickler lacks is a real pickle it refuses)
    if operand and int(operand.group(1)) <= 0xFF and chr(int(operand.group(1))) not in pickletools.code2op:
        return _not_a_pickle(chr(int(operand.group(1))))
    found = re.search(r"Unsupported global: GLOBAL ([\w.]+)", text)
    name = found.group(1) if found else None
    what = f" {name}" if name else " a Python object"
    allow = f"[{name}]" if name else "[TheClass]"
    return answer(
        title=f"torch.load refused to unpickle{what}",
        meaning=(
            "Since torch 2.6 torch.load defaults to weights_only=True: it loads tensors and plain"
            " containers only, because unpickling arbitrary objects can run code."
            f" The file holds{what}."
        ),
        cause=(
            "The checkpoint was saved with whole objects (a model, NumPy arrays, a config class)"
            " instead of a state_dict of tensors."
        ),
        fix=(
            "If you trust the file, allow exactly that:"
            f" torch.serialization.add_safe_globals({allow})"
            f" (or with torch.serialization.safe_globals({allow}): torch.load(path)). Only for a"
            " file you trust completely: torch.load(path, weights_only=False). Going forward,"
            " save model.state_dict() (or safetensors), which loads without either."
        ),
    )


def _driver_insufficient(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The NVIDIA driver is older than the CUDA this torch was built for",
        meaning=(
            "torch's CUDA runtime needs a driver at least as new as its CUDA version. nvidia-smi"
            " shows the newest CUDA the driver runs ('CUDA Version' in its header);"
            " torch.version.cuda the one torch was built for."
        ),
        cause="The torch wheel was built for a newer CUDA than the installed driver supports.",
        fix=(
            "Update the NVIDIA driver (https://www.nvidia.com/Download/index.aspx), or install a"
            " torch built for an older CUDA that the driver runs (torchwise doctor names it). To"
            " run on the CPU meanwhile, pick device='cpu' instead of calling .cuda()."
        ),
    )


# The first bytes of a file that is not a torch checkpoint, as pickle reports them.
LOAD_KEYS = {
    "v": (
        "the file is a Git LFS pointer (a small text file that starts 'version"
        " https://git-lfs...'), not the weights: the repository was cloned without Git LFS, or"
        " its LFS download quota was exhausted",
        "install Git LFS and fetch the real file (git lfs install; git lfs pull), or download"
        " the checkpoint from its release page; a real checkpoint is MBs, a pointer about 130"
        " bytes",
    ),
    "<": (
        "the file is an HTML page: the download link returned a web page (a login, quota or"
        " 'virus scan' page of a drive link) instead of the file",
        "open the file in a text editor to see the page, then download the checkpoint with a"
        " direct link (or the host's own tool, e.g. gdown for Google Drive)",
    ),
}


def _invalid_load_key(match: re.Match[str], text: str) -> Explanation:
    return _not_a_pickle(match.group(1))


def _not_a_pickle(key: str) -> Explanation:
    """A file whose first byte is no pickle opcode torch writes: ``invalid load key`` (the
    full unpickler) and weights_only's ``Unsupported operand`` (the byte as a number) alike."""
    cause, fix = LOAD_KEYS.get(
        key,
        (
            "the file is not a complete torch checkpoint: a partial download, a file saved by"
            " another library (a Keras/NumPy file, a safetensors file), or written by a crashed"
            " save",
            "check the file size against the source and download it again; load safetensors"
            " files with safetensors.torch.load_file",
        ),
    )
    return answer(
        title=f"This file is not a torch checkpoint (it starts with {key!r})",
        meaning=(
            "torch.load reads a zip archive or a pickle; the file's first byte"
            f" ({key!r}) is neither."
        ),
        cause=sentence(cause),
        fix=sentence(fix),
    )


def _truncated_checkpoint(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The checkpoint file is incomplete (it ends before its data does)",
        meaning=(
            "torch.save writes a zip archive whose directory sits at the end of the file (older"
            " torch: a pickle followed by the tensor bytes); torch.load reached the end of the"
            " file before that directory or those bytes, so the file stops early."
        ),
        cause=(
            "The file is truncated: a download or copy that stopped part-way (compare its size"
            " with the source), an upload that never finished, or a save interrupted by a crash"
            " or a full disk."
        ),
        fix=(
            "Download or copy the file again and check its size (or checksum) against the"
            " source; for your own runs save to a temporary name and rename when done, and load"
            " an earlier checkpoint meanwhile. A complete file in the old (pre-1.6) format"
            " that still fails may need the torch version it was saved with."
        ),
    )


def _checkpoint_module(match: re.Match[str], text: str) -> Explanation:
    module = match.group(1)
    return answer(
        title=f"The checkpoint refers to a module '{module}' that this program cannot import",
        meaning=(
            "torch.load unpickles the file, and the pickle names the classes it holds by module"
            f" and name; one of them lives in '{module}', which is not importable here."
        ),
        cause=(
            "The file was saved with torch.save of whole objects (the model, a loss, a config"
            f" class) from the project that trained it, where '{module}' is one of its own"
            " modules; outside that project's folder the import fails."
        ),
        fix=(
            "Load it from inside the project that saved it (or put that folder on sys.path:"
            " sys.path.insert(0, '/path/to/project')), then save only the weights:"
            " torch.save(model.state_dict(), path), which any program loads with"
            " torch.load(path, weights_only=True)."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart(
        "no-kernel-image",
        r"no kernel image is available for execution on the device"
        r"|with CUDA capability sm_\d+ is not compatible with the current PyTorch installation",
        _no_kernel_image,
    ),
    known(
        "driver-insufficient",
        r"CUDA driver version is insufficient for CUDA runtime version",
        _driver_insufficient,
    ),
    known(
        "driver-too-old",
        r"The NVIDIA driver on your system is too old \(found version (\d+)\)",
        _driver_too_old,
    ),
    known(
        "torchvision-operator-missing",
        # torch.ops' other wordings; image:: is torchvision's image extension (torchvision.io)
        r"operator (torchvision::\w+) does not exist|(?:No such operator|Could not find the operator)"
        r" ((?:torchvision|image)::\w+)",
        _torchvision_ops,
    ),
    known(
        "cuda-checkpoint-on-cpu",
        r"Attempting to deserialize object on a CUDA device"
        r" but torch\.cuda\.is_available\(\) is False",
        _cuda_checkpoint_on_cpu,
    ),
    # a paste cut above "Weights only load failed" still shows the unpickler's own line (round 8)
    known("weights-only-load", r"Weights only load failed|WeightsUnpickler error: Unsupported global", _weights_only),
    known("invalid-load-key", r"invalid load key, '(\\x[0-9a-f]{2}|.)'", _invalid_load_key),
    known(
        "checkpoint-truncated",
        r"PytorchStreamReader failed reading zip archive: failed finding central directory"
        r"|unexpected EOF(?:, expected \d+ more bytes)?\. The file might be corrupted"
        r"|storage has wrong (?:byte )?size: expected \S+ got \S+",
        _truncated_checkpoint,
    ),
    known(
        "checkpoint-module-missing",
        r"find_class\(mod_name, name\)\s*\n(?:.*\n)*?\s*ModuleNotFoundError: No module named '([\w.]+)'",
        _checkpoint_module,
    ),
]
