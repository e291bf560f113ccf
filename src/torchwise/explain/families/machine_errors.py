"""Known errors that come from the machine or from torch itself, not from the model code: a file
that could not be written (a full disk), a download that could not reach its server, the
driver's management library (NVML) that would not start, a TorchScript file this torch cannot
read back, and torch's own internal consistency checks.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known


def _write_failed(match: re.Match[str], text: str) -> Explanation:
    path = fact(text, r"torch\.save\([^,\n]*,\s*(.+)\)\s*$", re.MULTILINE)
    where = f" ({path.strip()})" if path else ""
    if re.search(r"^\s*MemoryError\b", text[: match.start()], re.MULTILINE):
        return answer(
            title="torch.save ran out of memory while writing the checkpoint",
            meaning=(
                "A MemoryError was raised inside torch.save, and the write it interrupted left a"
                f" file shorter than torch expected ({match.group(0).strip()})."
            ),
            cause=(
                "The process had no RAM left while serialising a large checkpoint (torch.save"
                " copies each storage as it writes; a multi-GB model on a machine with little free"
                " memory, or the whole training state saved at once); the position error is only"
                " the half-written file."
            ),
            fix=(
                "Free memory before saving (close other programs, del large objects, a smaller"
                " batch of data in memory), save only what is needed (model.state_dict(), without"
                " the optimizer or EMA copies), or save in parts; delete the truncated file."
            ),
        )
    return answer(
        title="torch.save could not write the whole file",
        meaning=(
            "The operating system refused or cut short a write while torch.save was writing the"
            f" checkpoint{where}: the bytes on disk stop before the end torch expected"
            f" ({match.group(0).strip()})."
        ),
        cause=(
            "The disk (or the user's quota) where the file is written is full, or the filesystem"
            " failed (a network or FUSE mount that dropped, an input/output error); a run that"
            " saves a checkpoint every epoch fills a disk after some epochs."
        ),
        fix=(
            "Check the free space where the checkpoint goes (df -h <folder>) and free some, or"
            " save to another disk; keep only the last few checkpoints; the file that failed is"
            " truncated, so delete it rather than load it."
        ),
    )


def _download_failed(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A download could not reach its server",
        meaning=(
            "Fetching a file over the network (torch.hub, pretrained weights, a dataset, a model"
            f" from the Hub) failed at the connection: {match.group(0).strip()}."
        ),
        cause=(
            "The machine has no route to the server (no internet, a firewall or proxy, a region"
            " that blocks GitHub or the Hub), the server closed the connection or refused it"
            " (rate limits, an outage, a moved URL): a network problem, not the code."
        ),
        fix=(
            "Retry; check that the URL opens from this machine (curl -I <url>); behind a proxy set"
            " HTTPS_PROXY; or download the file by hand and load it from disk (torch.hub.load(...,"
            " source='local'), from_pretrained('/local/folder'), torch.load(path))."
        ),
    )


def _nvml_init(match: re.Match[str], text: str) -> Explanation:
    if match.group(1):  # c10/cuda/driver_api.cpp: torch could not open libcuda itself
        return answer(
            title="torch could not load the NVIDIA driver library (libcuda)",
            meaning=(
                "torch opens the driver's libcuda.so.1 on demand (driver_api.cpp); the handle it"
                " got back is empty, so the library was not found or would not load."
            ),
            cause=(
                "The process sees no NVIDIA driver: none is installed, the container was started"
                " without the NVIDIA runtime, or LD_LIBRARY_PATH leads to a stub libcuda"
                " (cuda/lib64/stubs) instead of the driver's."
            ),
            fix=(
                "Run nvidia-smi in the same environment: if it fails, install or repair the driver"
                " (in Docker start with --gpus all); remove CUDA stub folders from"
                " LD_LIBRARY_PATH."
            ),
        )
    return answer(
        title="The NVIDIA driver's management library (NVML) would not start",
        meaning=(
            "torch asks NVML (libnvidia-ml, part of the driver) about the GPUs, here from the CUDA"
            " memory allocator; initialising it failed."
        ),
        cause=(
            "The driver and its NVML library do not match (the driver was upgraded and the"
            " machine not rebooted, so nvidia-smi fails with 'Driver/library version mismatch'),"
            " or a container sees the GPU without the host's NVML library."
        ),
        fix=(
            "Run nvidia-smi: if it fails, reboot (or reload the nvidia kernel modules) so the"
            " driver and library match, or reinstall the driver; in a container start it with"
            " the NVIDIA runtime (--gpus all) so the host's driver libraries are mounted."
        ),
    )


def _jit_load(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="torch.jit.load cannot rebuild this TorchScript file",
        meaning=(
            "Loading a TorchScript archive replays the saved graph in this torch; it stopped"
            f" with: {match.group(1).strip()}."
        ),
        cause=(
            "The file was written in a form this torch's loader cannot read: saved by another"
            " torch version, or after a transformation whose result does not load back (a"
            " module saved after torch.jit.optimize_for_inference, a nightly's format); a torch"
            " bug or a version gap, not the model code."
        ),
        fix=(
            "Load it with the torch version that saved it, or export it again with this torch"
            " (script or trace the model, then save); save the frozen module rather than the"
            " optimize_for_inference one."
        ),
    )


def _internal_assert(match: re.Match[str], text: str) -> Explanation:
    where = match.group(1) or match.group(2) or "torch's source"
    return answer(
        title="A consistency check inside torch failed",
        meaning=(
            f"torch checks its own invariants and stopped at one ({where}); the message itself"
            " asks for a bug report, so torch does not expect users to reach it."
        ),
        cause=(
            "Often a bug of this torch version; sometimes a combination of inputs that torch does"
            " not validate before it reaches the check (an unusual dtype, device, shape or"
            " layout for that operation, a tensor freed or shared across processes)."
        ),
        fix=(
            "Upgrade torch (or try the previous release); look at the inputs of the operation at"
            " the traceback's last line in your code (dtype, device, shape, contiguity); if it"
            " persists, make the smallest script that reproduces it and search or open an issue"
            " on pytorch/pytorch with it."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "save-write-failed",
        r"write\(\): fd \d+ failed with (?:Input/output error|No space left on device)"
        r"|\[enforce fail at [^\]]*inline_container\.cc:\d+\] \. unexpected pos \d+ vs \d+"
        r"|PytorchStreamWriter failed writing file",
        _write_failed,
    ),
    known(
        "download-failed",
        r"RemoteDisconnected: Remote end closed connection without response"
        r"|urlopen error \[Errno -?\d+\][^\n]*"
        r"|Temporary failure in name resolution",
        _download_failed,
        generic=True,
    ),
    known(
        "nvml-init-failed",
        r"nvmlInit\w*\(\) INTERNAL ASSERT FAILED|Failed to initialize NVML: [^\n]+"
        r"|(handle_0) INTERNAL ASSERT FAILED at \"?[^\"\n]*driver_api\.cpp",
        _nvml_init,
    ),
    known(
        "jit-load-failed",
        r"import_ir_module\([^\n]*\)\s*\n\s*RuntimeError: ([^\n]+)",
        _jit_load,
    ),
    known(
        "torch-internal-assert",
        r"INTERNAL ASSERT FAILED at \"?([^\":\s]+)\"?:\d+"
        r"|ASSERT FAILED at (\S+?):\d+, please report a bug to PyTorch",
        _internal_assert,
        generic=True,
    ),
]
