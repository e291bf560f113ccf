"""What a checkpoint's keys say: the key lists of a load_state_dict message (round 9: read from a
markdown paste too), and a line that indexes a loaded checkpoint (round 8, after the measurement).

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


# round 9: a markdown paste closes its label's bold or code before the list: "**Missing key(s) in state_dict:**"
MARKUP = r"[*_`]*"


def listed_keys(label: str, text: str) -> list[str]:
    """The keys the message lists: the last listing that quotes any (a user's own sentence
    may quote the message first, or with typographic quotes)."""
    for line in reversed(re.findall(rf"{label} key\(s\) in state_dict:{MARKUP} (.*)", text)):
        keys = re.findall(r'"([^"]+)"', line) or re.findall(r"[\u2018\u201c]([^\u2019\u201d]+)[\u2019\u201d]", line)
        if keys:
            return keys
    return []


def listing_cut(label: str, text: str) -> bool:
    """The last listing of ``label`` keys stops mid-list (a trailing comma, dots), not at the
    closing quote and full stop torch ends it with."""
    listings = [line for line in re.findall(rf"{label} key\(s\) in state_dict:{MARKUP} (.*)", text) if '"' in line]
    return bool(listings) and not re.search(r'"\s*\.?\s*$', listings[-1])
