"""Known errors of transformers and diffusers that could not fetch files from the Hugging Face Hub.

``from_pretrained`` takes a Hub id or a local folder and says which it could not use: "We couldn't
connect to 'https://huggingface.co' to load this file" (no network, a firewall, or offline mode),
and "Can't load tokenizer for 'X'. If you were trying to load it from 'https://huggingface.co/models',
make sure you don't have a local directory with the same name. Otherwise, make sure 'X' is the
correct path to a directory containing all relevant files". The name's shape tells which: a path
is a folder without the tokenizer's files; a Hub id is a download that did not happen.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

OFFLINE = (
    "Check that this machine reaches https://huggingface.co (a proxy: HTTPS_PROXY; where the Hub is"
    " blocked, a mirror: HF_ENDPOINT=https://hf-mirror.com), or download the repository where there is"
    " network (huggingface-cli download <id> --local-dir <dir>) and pass that folder to from_pretrained;"
    " for a gated model (Llama, Gemma) accept its licence and log in (huggingface-cli login)."
)


def _no_connection(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The Hugging Face Hub could not be reached, and the file is not in the local cache",
        meaning="from_pretrained tried to download a file from huggingface.co and got no connection.",
        cause=(
            "The machine has no network access to huggingface.co (a cluster node, a firewall or proxy,"
            " a region where it is blocked), or HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set while the"
            " file was never downloaded into the cache."
        ),
        fix=OFFLINE,
    )


def _cannot_load_tokenizer(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1)
    path = bool(re.match(r"(?:[A-Za-z]:)?[\\/.~]", name)) or name.count("/") > 1 or "\\" in name
    if path:
        return answer(
            title=f"The folder {name} holds no tokenizer files",
            meaning=f"from_pretrained was given the local folder {name} and found no tokenizer files in it.",
            cause=(
                "The folder is not a saved tokenizer: its download was incomplete or went elsewhere, the"
                " path points one level too high or too low (the repository's tokenizer/ subfolder), or"
                " only the model's weights were saved there."
            ),
            fix=(
                "List the folder: it needs tokenizer_config.json with the vocabulary files (vocab.txt,"
                " tokenizer.json or tokenizer.model); download the repository again into it, point at the"
                " folder that holds them, or save them there with tokenizer.save_pretrained(folder)."
            ),
        )
    return answer(
        title=f"The tokenizer of {name} could not be loaded from the Hub",
        meaning=(
            f"from_pretrained('{name}') found no local folder of that name and could not get the tokenizer's"
            " files from the Hub."
        ),
        cause=(
            "The download did not happen: no network to huggingface.co (a firewall, proxy or blocked"
            " region), a gated repository without a login, or a misspelt id; less often a folder of the same"
            f" name in the working directory hides the Hub repository, or the installed transformers/tokenizers"
            f" is too old for {name}'s tokenizer files."
        ),
        fix=OFFLINE + f" Rename a local folder called {name}, or upgrade transformers and tokenizers.",
    )


KNOWN: list[KnownError] = [
    known("hub-unreachable", r"We couldn'?t connect to '?https://huggingface\.co'? to load", _no_connection),
    known(
        "hub-tokenizer-not-loaded",
        r"Can'?t load tokenizer for '([^'\n]+)'\. If you were trying to load it from",
        _cannot_load_tokenizer,
    ),
]
