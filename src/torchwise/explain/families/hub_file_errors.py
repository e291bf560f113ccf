"""Known errors of the files a pretrained model is loaded from (from_pretrained): a JSON config
that is not valid JSON, and a tokenizer or model class that transformers left as None because
the package it needs is not installed.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import frames

# The frame that read the file names it: transformers' readers of each JSON file.
JSON_FILES = (
    (r"get_tokenizer_config|tokenizer_config", "tokenizer_config.json"),
    (r"special_tokens_map", "special_tokens_map.json"),
    (r"preprocessor|feature_extract|image_processing", "preprocessor_config.json"),
    (r"generation", "generation_config.json"),
    (r"adapter_config|peft", "adapter_config.json"),
    (r"_dict_from_json_file|get_config_dict|configuration_utils|config", "config.json"),
)
FROM_PRETRAINED = (
    r"from_pretrained|tokenization_auto|configuration_utils|get_config_dict|huggingface_hub"
    r"|transformers[\\/]"
)


def _loading_pretrained(match: re.Match[str], text: str) -> bool:
    return bool(re.search(FROM_PRETRAINED, text))


def _json_file(text: str) -> str:
    """The file being read: named by the traceback's frames (their function and source), else
    by a file name the paste quotes."""
    called = " ".join(f"{frame.function} {frame.source} {frame.file}" for _, frame in frames(text))
    for pattern, name in JSON_FILES:
        if re.search(pattern, called):
            return name
    quoted = re.search(r"\b(?:tokenizer_|preprocessor_|generation_|adapter_)?config\.json", text)
    return quoted.group(0) if quoted else "one of the model's JSON files"


def _bad_json(match: re.Match[str], text: str) -> Explanation:
    problem, line, column = match.group(1), match.group(2), match.group(3)
    name = _json_file(text)
    empty = problem.startswith("Expecting value") and line == "1" and column == "1"
    if empty:
        cause = (
            f"{name} is empty or not JSON at all: a download that stopped, an HTML error page, or"
            " a Git LFS pointer saved in its place (in the local folder or the cache)."
        )
        fix = (
            "Delete that file (or the model's folder in ~/.cache/huggingface/hub) and download it"
            " again; open it in an editor to see what it holds."
        )
    else:
        cause = (
            f"{name} itself is malformed ({problem} at line {line}, column {column}): the file in"
            " the model's repository (or a local copy someone edited) has a syntax error, e.g."
            " text after the closing brace or a missing comma; the loading code is not at fault."
        )
        fix = (
            f"Fix {name} at that line in a local copy of the model and load from that folder, or"
            " load a revision of the repository whose file is valid (from_pretrained(...,"
            " revision=...)); report it to the repository's owner."
        )
    return answer(
        title=f"{name} is not valid JSON ({problem}, line {line} column {column})",
        meaning=(
            "from_pretrained reads the model's settings from JSON files; Python's json parser"
            f" stopped at line {line}, column {column} of {name}."
        ),
        cause=cause,
        fix=fix,
    )


def _class_is_none(match: re.Match[str], text: str) -> bool:
    """The None is a transformers class (its from_pretrained), or a tokenizer the paste loaded
    with a tokenizer class's from_pretrained. (A None's __name__ in the Auto classes' lookup is
    left alone: there it is as often a model without a fast tokenizer, use_fast=False, as a
    missing package.)"""
    if match.group(1) == "from_pretrained":
        return bool(re.search(r"transformers|Tokenizer|AutoModel|AutoConfig", text))
    return bool(re.search(r"\w*Tokenizer(?:Fast)?\.from_pretrained", text))


def _none_class(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The tokenizer (or model) class is None: a package it needs is not installed",
        meaning=(
            f"'NoneType' object has no attribute '{match.group(1)}': the tokenizer (or the class"
            " it is loaded from) is None. transformers leaves a class as None (or a placeholder)"
            " when an optional package it depends on is missing."
        ),
        cause=(
            "The tokenizer needs sentencepiece (Marian, T5, XLNet, ALBERT, CamemBERT, mBART ...)"
            " or tokenizers, which transformers 4 and later no longer installs by itself; the"
            " code worked in an environment that had it."
        ),
        fix=(
            "pip install sentencepiece (and protobuf), then restart the Python process or"
            " notebook runtime; load with AutoTokenizer.from_pretrained(name)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "pretrained-json-invalid",
        r"JSONDecodeError: (Extra data|Expecting [^:\n]+|Unterminated string[^:\n]*|Invalid [^:\n]+):"
        r" line (\d+) column (\d+)",
        _bad_json,
        when=_loading_pretrained,
    ),
    known(
        "pretrained-class-none",
        r"'NoneType' object has no attribute"
        r" '(from_pretrained|tokenize|batch_encode_plus|encode_plus|encode|convert_tokens_to_ids)'",
        _none_class,
        when=_class_is_none,
    ),
]
