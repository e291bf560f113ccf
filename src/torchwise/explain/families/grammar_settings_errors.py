"""A script's settings object without the setting a line reads: ``'Namespace' object has no attribute 'mode'``.

argparse's ``Namespace`` (and the dict-like config objects scripts use the same way: EasyDict,
mmcv's ConfigDict, AttrDict) holds exactly the options its parser or file defines. A line that reads
``args.mode`` where no ``--mode`` was defined names its own cause: the code and its options were
changed apart (a line left from an older version of the script, an option another script's parser
defines), or the settings were loaded from a saved file (an experiment's saved arguments) written
before the option existed. The frame whose line reads the setting says where. A line that calls the
name as a method (``v.train()`` on a Namespace) is another mistake, an object that is not the one
meant, and is left alone.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import Frame, frames

NO_SETTING = r"AttributeError: '(Namespace|EasyDict|ConfigDict|AttrDict|edict|Config)' object has no attribute '(\w+)'"


def _reader(match: re.Match[str], text: str) -> tuple[Frame, str] | None:
    """The last frame whose line reads the setting (not as a call), and the expression that holds it."""
    setting = match.group(2)
    for _, frame in reversed(frames(text[: match.start()])):
        # the last one on the line: in self.x = opt.x the read is on the right
        found = re.findall(rf"((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\.{setting}\b(?!\s*\()", frame.source)
        if found:
            return frame, found[-1]
        if re.search(rf"\.{setting}\s*\(", frame.source):
            return None
    return None


def _missing_setting(match: re.Match[str], text: str) -> Explanation | None:
    found = _reader(match, text)
    if found is None:
        return None
    frame, holder = found
    kind, setting = match.group(1), match.group(2)
    parser = kind == "Namespace"
    defined = f"--{setting}" if parser else f"'{setting}'"
    return answer(
        title=f"{holder}.{setting} is read, but the {'options define' if parser else 'config defines'} no {defined}"
        f" ({frame.place})",
        meaning=(
            f"{frame.place} ({frame.source}) reads {holder}.{setting}; {holder} is a {kind} that holds only the"
            f" {'options its argument parser defines' if parser else 'keys its config file or dict defines'}, and"
            f" {setting} is not among them."
        ),
        cause=(
            f"The code and its settings were changed apart: the line reads a setting that the"
            f" {'parser' if parser else 'config'} it runs with does not define (left from another version of the"
            " script, or defined by another script's options), or the settings were loaded from a saved file (an"
            f" experiment's saved arguments or config) written without {setting}."
        ),
        fix=(
            f"Define it where the settings are built ({'parser.add_argument' if parser else 'the config'}("
            f"'{'--' if parser else ''}{setting}', default=...) with the value the code expects; or add it to the"
            " saved settings file), or remove the read if the code no longer needs it; for an optional one,"
            f" getattr({holder}, '{setting}', default)."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart("setting-not-defined", NO_SETTING, _missing_setting, generic=True),
]
