"""What a line that indexes a loaded checkpoint says about the file (round 8, after the measurement).

``model.load_state_dict(torch.load(path)['model_state_dict'])`` raising ``KeyError`` reads an entry
of a checkpoint dict from a file that may be no such dict: saved as ``torch.save(model.state_dict())``,
the file is the state dict itself, keyed by parameter names. Pure text work.
"""

from __future__ import annotations

import re

# load_state_dict called on a model, not on an optimizer's, scheduler's or scaler's state
MODEL_LOAD = re.compile(r"(\w+)\.load_state_dict\(")
NOT_A_MODEL = re.compile(r"optim|sched|scaler", re.IGNORECASE)


def whole_state_dict(source: str, holder: str) -> str:
    """The sentence for a line that hands the entry to a model's ``load_state_dict``: the file may be
    the state dict itself; nothing for any other line."""
    call = MODEL_LOAD.search(source)
    if call is None or NOT_A_MODEL.search(call.group(1)):
        return ""
    receiver = call.group(1)
    return (
        f" If it prints parameter names (conv1.weight, ...), the file is the state dict itself: pass it whole,"
        f" {receiver}.load_state_dict({holder})."
    )
