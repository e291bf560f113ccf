"""Known errors of torch modules (and torch's own internals) pickled by another torch version.

``torch.save(model)`` pickles the module objects themselves. Unpickling restores their
``__dict__`` as it was at save time and does not run ``__init__``, so a module saved under an
older torch lacks the attributes that later releases added to its class, and the installed
torch's ``forward`` (or a hook machinery) reads them: ``'Upsample' object has no attribute
'recompute_scale_factor'``. The message names a torch.nn class and an attribute that torch itself
sets (one that releases added, or a private one), which is what tells this apart from a typo in
the user's own model.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

# torch.nn classes that models are commonly pickled with.
NN_CLASSES = (
    "Upsample|UpsamplingNearest2d|UpsamplingBilinear2d|Conv1d|Conv2d|Conv3d|ConvTranspose1d|"
    "ConvTranspose2d|ConvTranspose3d|Linear|BatchNorm1d|BatchNorm2d|BatchNorm3d|GroupNorm|LayerNorm|"
    "InstanceNorm2d|Embedding|LSTM|GRU|RNN|MultiheadAttention|TransformerEncoderLayer|"
    "TransformerDecoderLayer|TransformerEncoder|ReLU|ReLU6|LeakyReLU|SiLU|Hardswish|Hardsigmoid|"
    "Mish|GELU|Sigmoid|Tanh|Dropout|Dropout2d|MaxPool2d|AvgPool2d|AdaptiveAvgPool2d|"
    "AdaptiveMaxPool2d|Sequential|ModuleList|ModuleDict|Identity|Flatten|PixelShuffle|ZeroPad2d"
)
# Public attributes torch added to existing nn classes in later releases: the classes, the
# release, and the value that keeps the old behaviour.
ADDED_LATER = {
    "recompute_scale_factor": ("Upsample", "1.11", "None"),
    "padding_mode": ("the conv layers", "1.1", "'zeros'"),
    "approximate": ("GELU", "1.12", "'none'"),
    "inplace": ("Hardswish/SiLU/Mish", "1.6-1.9", "False"),
    "batch_first": ("MultiheadAttention and the Transformer layers", "1.9", "False"),
    "norm_first": ("the Transformer layers", "1.10", "False"),
    "proj_size": ("LSTM", "1.8", "0"),
}


# nn.Module's own bookkeeping that later torch releases added to every module's __init__ (round 8:
# any class, YOLO's Conv or a user's Model, pickled whole under an older torch lacks them)
MODULE_INTERNALS = (
    "_non_persistent_buffers_set|_is_full_backward_hook|_forward_hooks_with_kwargs|_forward_pre_hooks_with_kwargs"
    "|_backward_pre_hooks|_forward_hooks_always_called|_state_dict_pre_hooks|_load_state_dict_post_hooks"
)


def _torch_owned(match: re.Match[str], text: str) -> bool:
    attribute = match.group(3)
    return attribute.startswith("_") or attribute in ADDED_LATER


def _old_module(match: re.Match[str], text: str) -> Explanation:
    module, attribute = match.group(1) or match.group(2), match.group(3)
    added = ADDED_LATER.get(attribute)
    since = f" ({added[0]} has it since torch {added[1]})" if added else ""
    value = added[2] if added else "the value the class's __init__ gives it"
    return answer(
        title=f"The pickled {module} lacks '{attribute}': it was saved by another torch version",
        meaning=(
            f"The installed torch's {module} code reads self.{attribute}, which torch sets in"
            f" {module}.__init__{since}; this {module} object was restored from a pickle, which"
            " does not run __init__, and has no such attribute."
        ),
        cause=(
            "The model (or checkpoint) was saved whole, with torch.save(model), under an older"
            " torch than the one loading it, so its module objects carry the attributes of that"
            " release."
        ),
        fix=(
            "Load it with the torch version it was saved with (the project's README or"
            " requirements), then save model.state_dict() and load that into a model built by the"
            f" code; or, to keep this file, set the attribute after loading: for m in"
            f" model.modules(): if isinstance(m, {'nn.' if match.group(1) else ''}{module}): m.{attribute} = {value}."
        ),
    )


def _pickled_name_missing(match: re.Match[str], text: str) -> Explanation:
    name, module = match.group(1), match.group(2)
    package = module.split(".")[0]
    return answer(
        title=f"The file was pickled with a {package} whose {module} has {name}; the installed one has not",
        meaning=(
            f"Unpickling looks every object up by the module and name it was saved under: {module}.{name};"
            f" the installed {package}'s {module} has no {name}."
        ),
        cause=(
            f"The file was saved by another release of {package}, usually a newer one than the installed"
            f" (its internals, such as {name}, change between releases): a checkpoint or pretrained"
            f" weights made with a {package} the code's requirements do not match."
        ),
        fix=(
            f"Install the {package} release the file was made with (at least as new; the project's"
            f" requirements name it), or load it there once and save model.state_dict() for the"
            f" release you use."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "pickled-name-missing",
        r"Can't get attribute '(\w+)' on <module '((?!__main__|__mp_main__)(?:torch|numpy|torchvision)(?:\.\w+)*)'",
        _pickled_name_missing,
    ),
    known(
        "module-from-older-torch",
        rf"'(?:({NN_CLASSES})|(\w+)(?=' object has no attribute '(?:{MODULE_INTERNALS})'))' object has no attribute"
        r" '(\w+)'",
        _old_module,
        when=_torch_owned,
    ),
]
