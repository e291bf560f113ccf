"""Known errors of from_pretrained looking for a file the repository or folder does not hold.

transformers, diffusers and peft load a model by file name from a Hub repository or a local
folder: "X does not appear to have a file named config.json", "Error no file named
pytorch_model.bin, tf_model.h5, ... found in directory X". The name they looked for says what is
missing: a config.json (the folder is not a saved model of that library: an adapter folder, a
torch.save file, another library's layout) or a weights file (the weights are in a subfolder, in
the other format, or under another name).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _no_file(match: re.Match[str], text: str) -> Explanation:
    where = (match.group(1) or match.group(4) or "the repository").strip("'\"` ")
    wanted = (match.group(2) or match.group(3) or "").strip()
    first = re.split(r",\s*| or ", wanted)[0] if wanted else "the file"
    if first == "config.json":
        cause = (
            f"{where} is not a saved model of the library that loads it: a LoRA/adapter folder (it"
            " holds adapter_config.json, not config.json), a checkpoint folder written by torch.save or"
            " another framework, or a repository id that names another repository (or a local folder"
            " of that name that shadows the Hub repository)."
        )
        fix = (
            "List what the folder or repository holds; for an adapter load the base model first and then"
            " PeftModel.from_pretrained(base, adapter_dir); give the base repository id for the model"
            " itself; rename or move a local folder that has the repository's name."
        )
    else:
        cause = (
            f"{where} does not hold {first} where the loader looks (its root, or the subfolder it was"
            " given): the weights are in a subfolder (diffusers components: unet/, vae/, text_encoder/),"
            " in the other format (model.safetensors where an older library asks for a .bin, or the"
            " reverse), or under another name; or the checkpoint folder was saved incompletely."
        )
        fix = (
            "Look at the repository's file list and pass what matches it: subfolder='unet' (the"
            " component's folder), use_safetensors=True (or upgrade transformers/diffusers so they read"
            " .safetensors), the right revision/variant; or save the model again with save_pretrained."
        )
    return answer(
        title=f"from_pretrained found no {first} in {where}",
        meaning=f"The loader looked for {wanted or first} in {where} and found none of it.",
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "pretrained-file-missing",
        # a file name ends in a word character: the message's own full stop is not part of it
        r"(\S+) does not appear to have (?:a file named|files named) ([\w.\-]*\w(?:(?:, | or )[\w.\-]*\w)*)"
        r"|Error no file named ([\w.\-]*\w(?:(?:, | or )[\w.\-]*\w)*) found in directory (\S+?)\.?(?:\s|$)",
        _no_file,
    ),
]
