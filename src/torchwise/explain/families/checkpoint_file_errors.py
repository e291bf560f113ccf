"""Known errors of writing a checkpoint file and of reading one in the wrong format: torch.save
that cannot create its file, and a file in torch's zip format handed to the legacy unpickler.

(The other checkpoint-file errors, a file that is not a checkpoint or is cut short, live in
``setup_errors``.)
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _cannot_write(match: re.Match[str], text: str) -> Explanation:
    path = match.group(1) or match.group(2)
    folder = match.group(2) is not None
    return answer(
        title=f"torch.save could not create {path}",
        meaning=(
            f"torch.save opens the file for writing first; the folder {path} does not exist."
            if folder
            else f"torch.save opens the file for writing first, and {path} could not be opened."
        ),
        cause=(
            "The folder it goes in does not exist (torch.save does not create folders), the"
            " process may not write there, or the disk is full (a long run that filled it with"
            " checkpoints)."
        ),
        fix=(
            "Create the folder first (os.makedirs(os.path.dirname(path), exist_ok=True)); check"
            " free space (df -h) and permissions there, and keep only the last few checkpoints."
        ),
    )


def _persistent_load(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A checkpoint in torch's zip format read by the legacy unpickler",
        meaning=(
            "The file holds tensors stored as persistent ids, which only torch.load knows how to"
            " read; plain pickle, or the legacy reader of an old torch, cannot."
        ),
        cause=(
            "The file was written by a torch 1.6 or newer (the zip format) and is read by an"
            " older torch or by pickle.load; or it is not a checkpoint torch wrote at all."
        ),
        fix=(
            "Load it with torch.load in a torch at least as new as the one that saved it; to"
            " hand it to an old torch, save it again from a new one with"
            " torch.save(obj, path, _use_new_zipfile_serialization=False)."
        ),
    )


def _optimizer_groups(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The saved optimizer state does not fit the optimizer built now",
        meaning=(
            "optimizer.load_state_dict matches the saved state to the optimizer's parameter"
            " groups by position and size (it knows no names): "
            + ("the number of groups differs." if match.group(1) else
               "a group holds another number of parameters than the saved one.")
        ),
        cause=(
            "The optimizer is built over other parameters than the one that was saved: the model"
            " differs (another backbone, layers added or removed, a newer version of the"
            " project), other layers are frozen or trained with their own learning rate, or"
            " a group is added after the optimizer is built (add_param_group) in one run and not"
            " in the other; or a pretrained checkpoint is being resumed rather than fine-tuned."
        ),
        fix=(
            "Build the optimizer exactly as in the run that saved it (same model, same groups in"
            " the same order, extra groups added before load_state_dict); to fine-tune or infer"
            " from a checkpoint, load only the model weights and start a new optimizer"
            " (skip optimizer.load_state_dict)."
        ),
    )


def _capturable(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="Adam's capturable check failed: the optimizer state is not on the GPU",
        meaning=(
            "Adam/AdamW with capturable=True (for CUDA graphs) keep their step counters on the"
            " GPU and refuse parameters or steps elsewhere."
        ),
        cause=(
            "torch 1.12.0 sets capturable when an optimizer state is loaded (a resumed"
            " checkpoint), while the loaded state_steps stay on the CPU: a bug of that release;"
            " or the model was moved after the optimizer state was loaded."
        ),
        fix=(
            "Upgrade torch (1.12.1 fixed it), or after optimizer.load_state_dict set"
            " optimizer.param_groups[0]['capturable'] = True and move the state to the GPU;"
            " move the model to the GPU before building and loading the optimizer."
        ),
    )


def _no_version_record(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The checkpoint's archive has no 'version' record",
        meaning=(
            "torch.save's zip format keeps a 'version' record inside the archive; torch.load found"
            " a zip file without it."
        ),
        cause=(
            "The file is a zip archive but not a complete torch.save archive: an interrupted or"
            " corrupted download (compare the size with the source), a file repacked by another"
            " tool, or one written by a torch whose format this torch does not read."
        ),
        fix=(
            "Download it again and check its size or checksum; if it is complete, load it with the"
            " torch version it was saved with (the project's environment file) and save its"
            " state_dict again."
        ),
    )

KNOWN: list[KnownError] = [
    known(
        "save-cannot-open",
        r"File (\S+) cannot be opened\.?|Parent directory (\S+) does not exist",
        _cannot_write,
    ),
    known(
        "persistent-load",
        r"A load persistent id instruction was encountered,?\s+but no persistent_load function was specified",
        _persistent_load,
    ),
    known(
        "optimizer-state-mismatch",
        r"loaded state dict (has a different number of) parameter groups"
        r"|loaded state dict contains a parameter group that doesn't match the size of optimizer's group",
        _optimizer_groups,
    ),
    known(
        "adam-capturable",
        r"If capturable=True, params and state_steps must be (?:on supported devices|CUDA tensors)",
        _capturable,
    ),
    known("checkpoint-no-version", r"Expected hasRecord\(\"version\"\) to be true", _no_version_record),
]
