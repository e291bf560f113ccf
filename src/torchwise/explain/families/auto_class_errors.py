"""Known errors of a transformers Auto class asked for a head the model's type does not have.

Each ``AutoModelFor...`` class maps config classes to the model classes with that head;
"Unrecognized configuration class <class '...T5Config'> for this kind of AutoModel:
AutoModelForCausalLM" says the config's model type has no entry in that map: the architecture is
not of that kind (an encoder-decoder asked for a causal LM, a vision-language model asked for a text
LM), or a remote-code model's ``auto_map`` names another Auto class.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

# the Auto class a family of configs is loaded with, by the config class name
RIGHT_CLASS = (
    (r"T5|MT5|Bart|MBart|Pegasus|Marian|Blenderbot|ProphetNet|LED|UMT5", "AutoModelForSeq2SeqLM"),
    (
        r"VL|Llava|Vision|Blip|Idefics|Pali|Mllama|Qwen2_5_VL|Florence",
        "its own class (e.g. AutoModelForImageTextToText / AutoModelForVision2Seq)",
    ),
    (
        r"Bert|Roberta|Electra|Deberta|Albert|DistilBert|XLMRoberta",
        "AutoModelForMaskedLM or a task head (AutoModelForSequenceClassification)",
    ),
    (r"Whisper|Wav2Vec|Speech", "AutoModelForSpeechSeq2Seq / AutoModelForCTC"),
)


def _unrecognized(match: re.Match[str], text: str) -> Explanation:
    config, auto = match.group(1), match.group(2)
    short = config.rsplit(".", 1)[-1]
    remote = config.startswith("transformers_modules")
    right = next((name for pattern, name in RIGHT_CLASS if re.search(pattern, short)), None)
    if remote:
        cause = (
            f"{short} comes from the repository's own code (trust_remote_code), and its config.json's"
            f" auto_map does not register it for {auto}: that model is loaded with the class its auto_map"
            " names (often AutoModel), or the remote code was written for another transformers release."
        )
        fix = (
            "Load it with the Auto class its config.json auto_map lists (e.g. AutoModel.from_pretrained(...,"
            " trust_remote_code=True)), or the transformers version the model card names."
        )
    else:
        cause = (
            f"{auto} has no model for {short} in this transformers: the architecture is not of that kind"
            + (f" (load it with {right})" if right else "")
            + ", or the model type is newer than the installed transformers' mapping."
        )
        fix = (
            f"Use the Auto class for this architecture{f' ({right})' if right else ''} as the model card"
            " shows, or upgrade transformers to a release that maps this model type for that task."
        )
    return answer(
        title=f"{auto} does not know {short}",
        meaning=f"{auto}.from_pretrained looked {short} up in its config-to-model map and found no entry.",
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    known(
        "auto-class-unrecognized-config",
        r"Unrecognized configuration class <class '([\w.\-]+)'> for this kind of AutoModel: (\w+)",
        _unrecognized,
    ),
]
