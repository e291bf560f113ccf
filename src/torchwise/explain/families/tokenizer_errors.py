"""Known errors of a transformers tokenizer class that is None.

transformers keeps a table of tokenizer classes per model type, and a class whose backend is
not installed is None there: the slow classes of SentencePiece models (Marian, T5, CamemBERT,
XLNet, ALBERT) without ``sentencepiece``, the fast ones without ``tokenizers``, and models that
have no fast class in that release. Python then reports the None, not the tokenizer: here
``'NoneType' object has no attribute '__name__'`` (AutoTokenizer's lookup of a class by name
walked over a None entry; ``hub_file_errors`` reads ``... 'from_pretrained'``, a class that is
None used directly). The message alone could be any None; the paste says it is a tokenizer
(AutoTokenizer, tokenization_auto in a frame).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _about_tokenizers(match: re.Match[str], text: str) -> bool:
    return bool(re.search(r"Tokenizer\b|tokenization_auto|tokenizer_class", text))


def _tokenizer_none(match: re.Match[str], text: str) -> Explanation:
    attribute = match.group(1)
    return answer(
        title="transformers has no tokenizer class for this model here (it is None)",
        meaning=(
            f"'NoneType' object has no attribute '{attribute}': the tokenizer class transformers"
            " looked up for this model is None in the installed release."
        ),
        cause=(
            "The class this model's tokenizer config asks for (often its fast class) is not in"
            " the installed release's table, so the lookup by name walks the whole list and meets"
            " an entry left None because its package is missing (sentencepiece, which"
            " transformers 4 no longer installs; SentencePiece models such as Marian, T5,"
            " CamemBERT, BARThez, mBART-50 need it)."
        ),
        fix=(
            "pip install sentencepiece (restart the kernel or runtime afterwards). If it still"
            " fails, load the slow tokenizer: AutoTokenizer.from_pretrained(name, use_fast=False),"
            " or install the transformers version the model card names."
        ),
    )


def _convert_needs_sentencepiece(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The fast tokenizer cannot be built: sentencepiece is not installed",
        meaning=(
            "The model ships only a slow SentencePiece tokenizer; transformers converts it to a"
            " fast one when loading, and the conversion needs the sentencepiece package."
        ),
        cause="sentencepiece is not installed in this environment (transformers 4 no longer installs it).",
        fix=(
            "pip install sentencepiece (and protobuf), then restart the runtime; or load the slow"
            " tokenizer: AutoTokenizer.from_pretrained(name, use_fast=False)."
        ),
    )

KNOWN: list[KnownError] = [
    known(
        "tokenizer-class-none",
        r"'NoneType' object has no attribute '(__name__)'",
        _tokenizer_none,
        when=_about_tokenizers,
    ),
    known(
        "tokenizer-needs-sentencepiece",
        r"Couldn't instantiate the backend tokenizer from one of:[^\n]*You need to have sentencepiece"
        r" installed",
        _convert_needs_sentencepiece,
    ),
]
