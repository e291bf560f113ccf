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
]
