"""Known errors of a fast tokenizer whose tokenizer.json file cannot be opened.

transformers builds a fast tokenizer from the file that ``tokenizer_config.json`` or the
repository names (``tokenizer_file``) with the Rust library ``tokenizers``, whose I/O errors read
"Exception: No such file or directory (os error 2)" under ``TokenizerFast.from_file``: the path it
was given does not exist on this machine.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import frames


def _from_file(match: re.Match[str], text: str) -> bool:
    inside = [frame for _, frame in frames(text[: match.start()])]
    return bool(inside) and "from_file" in inside[-1].source


def _tokenizer_file(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The fast tokenizer's tokenizer.json could not be opened",
        meaning=(
            "transformers built the fast tokenizer from a tokenizer file (tokenizers' from_file), and the"
            " path it was given does not exist on this machine."
        ),
        cause=(
            "The repository's tokenizer_config.json names a tokenizer_file by a path on its author's"
            " machine (saved with an absolute path), or the tokenizer.json was not downloaded or copied"
            " with the other files."
        ),
        fix=(
            "Load the tokenizer of the base model the checkpoint was fine-tuned from"
            " (AutoTokenizer.from_pretrained('<base model id>')), or pass use_fast=False to build the"
            " slow tokenizer from the vocabulary files, or remove the tokenizer_file entry from a local"
            " copy of tokenizer_config.json."
        ),
    )


KNOWN: list[KnownError] = [
    known("tokenizer-file-missing", r"No such file or directory \(os error 2\)", _tokenizer_file, when=_from_file),
]
