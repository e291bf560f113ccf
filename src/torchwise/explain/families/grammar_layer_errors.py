"""A torch.nn layer asked for a method that torch's class never had.

``'Linear' object has no attribute 'set_lora_layer'`` raised by ``nn.Module.__getattr__`` (torch's
frame) names a plain torch.nn class, and the line before it calls a method on a layer inside a
model (``attn_module.to_q.set_lora_layer(...)``). torch's own classes have no such method, so the
code was written for a release of the library that built the model in which that layer was the
library's own subclass of the torch class (diffusers' LoRACompatibleLinear); the installed release
builds the plain class. Attributes torch itself sets (``in_features``, ``weight``, ``bias``) mean
another library's class of the same name instead, and names torch added in later releases are
``module_version_errors``': both are left out here.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.families.module_version_errors import ADDED_LATER, NN_CLASSES
from torchwise.explain.paste import frames

NO_ATTRIBUTE = rf"AttributeError: '({NN_CLASSES})' object has no attribute '([a-z]\w*)'"
# What torch's own layers and nn.Module have: asked for and missing, the object is another class.
TORCH_OWN = {
    "in_features", "out_features", "in_channels", "out_channels", "kernel_size", "stride", "padding",
    "weight", "bias", "num_features", "running_mean", "running_var", "eps", "momentum", "training",
    "forward", "parameters", "state_dict", "module", "modules", "children", "to", "cuda", "half", "float",
}


def _layer_call(match: re.Match[str], text: str) -> tuple[str, str] | None:
    """(the caller's place, the expression) where the frame before torch's __getattr__ calls the method
    on a layer reached through a model's attributes (two dots or more: ``a.to_q.set_lora_layer(``)."""
    found = frames(text[: match.start()])
    if len(found) < 2 or found[-1][1].package != "torch" or found[-1][1].function != "__getattr__":
        return None
    attribute = match.group(2)
    if attribute in TORCH_OWN or attribute in ADDED_LATER:
        return None
    caller = found[-2][1]
    call = re.search(rf"((?:[A-Za-z_]\w*\.){{2,}}){re.escape(attribute)}\s*\(", caller.source)
    return (caller.place, call.group(1) + attribute) if call else None


def _library_layer(match: re.Match[str], text: str) -> Explanation | None:
    found = _layer_call(match, text)
    if found is None:
        return None
    place, expression = found
    layer, method = match.group(1), match.group(2)
    return answer(
        title=f"A plain torch.nn.{layer} has no {method}(): the code expects another release's layer ({place})",
        meaning=(
            f"{place} calls {expression}(), and the layer there is torch's own nn.{layer}, which has no"
            f" method {method}."
        ),
        cause=(
            f"The code was written for a release of the library that builds this model in which that layer"
            f" was the library's own subclass of nn.{layer} with {method}() (as diffusers' LoRACompatibleLinear"
            f" had set_lora_layer); the installed release builds a plain nn.{layer} there (its API moved on)."
        ),
        fix=(
            "Install the library versions the project was written for (its requirements file or README pins"
            " them; pip show <library> shows the installed one), or port this call to the installed release's"
            " API."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart("layer-of-another-release", NO_ATTRIBUTE, _library_layer, generic=True),
]
