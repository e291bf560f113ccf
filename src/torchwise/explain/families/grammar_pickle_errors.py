"""An unpacking that fails inside ``__setstate__`` while a file is unpickled.

Unpickling rebuilds each object by handing its class's ``__setstate__`` the state tuple that was
saved with it. When the installed class unpacks that tuple into another number of names
(``ValueError: too many values to unpack (expected 3)`` in ``torch/autograd/variable.py``'s
``__setstate__``), the file was written by a release of that package whose objects carry another
layout: too many values, a newer release than the installed one; too few, an older one. The
frame that raised names the package; nothing else in the paste is needed.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import last_frame

UNPACK = r"ValueError: (too many|not enough) values to unpack \(expected (\d+)(?:, got (\d+))?\)"


def _state_layout(match: re.Match[str], text: str) -> Explanation | None:
    frame = last_frame(text, match.start())
    if frame is None or frame.function != "__setstate__" or frame.package is None:
        return None
    package, more = frame.package, match.group(1) == "too many"
    newer = "newer" if more else "older"
    loader = next((word for word in ("model_zoo", "load_url", "torch.load", "pickle") if word in text), None)
    through = f" (read here through {loader})" if loader else ""
    return answer(
        title=f"The file was pickled by a {newer} {package} than the installed one",
        meaning=(
            f"Unpickling hands each object's saved state to its class's __setstate__; the installed"
            f" {package}'s {frame.place} unpacks it into {match.group(2)} names and the saved state holds"
            f" {'more' if more else 'fewer'}."
        ),
        cause=(
            f"The objects in the file were saved by another release of {package}{through}, whose objects carry"
            f" a different state: {'more fields, so a newer release' if more else 'fewer fields, so an older release'}"
            f" than the installed {package}. Pretrained weights downloaded by a library of one release"
            f" (torchvision's model zoo) and loaded by a {package} of another do this."
        ),
        fix=(
            f"Install the {package} release that matches the file (for downloaded weights, the {package} that the"
            f" installed library version requires; upgrade {package} where it is the older side), or load the"
            " file once under that release and save a plain state_dict for this one."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart("pickled-state-layout", UNPACK, _state_layout, generic=True),
]
