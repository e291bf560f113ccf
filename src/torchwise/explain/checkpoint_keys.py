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
        # an empty key ("") is a key too (round 10: a key cut to nothing); [^"]+ would pair the quotes wrongly
        keys = re.findall(r'"([^"]*)"', line) or re.findall(r"[\u2018\u201c]([^\u2019\u201d]+)[\u2019\u201d]", line)
        if keys:
            return keys
    return []


def listing_cut(label: str, text: str) -> bool:
    """The last listing of ``label`` keys stops mid-list (a trailing comma, dots), not at the
    closing quote and full stop torch ends it with."""
    listings = [line for line in re.findall(rf"{label} key\(s\) in state_dict:{MARKUP} (.*)", text) if '"' in line]
    return bool(listings) and not re.search(r'"\s*\.?\s*$', listings[-1])


# What a training checkpoint holds beside the weights: a dict handed whole to load_state_dict
# shows these as "unexpected keys" with no dot in them (a weight's key always has one).
WEIGHT_ENTRIES = ("state_dict", "model", "model_state_dict", "model_state", "net", "network",
                  "state_dict_ema", "model_ema", "ema", "params", "weights")
TRAINING_ENTRIES = ("epoch", "optimizer", "optimizer_state_dict", "args", "arch", "iteration",
                    "step", "global_step", "scheduler", "lr_scheduler", "amp_scaler", "scaler",
                    "best_acc", "best_acc1", "metric", "config", "version")


def whole_checkpoint(missing: list[str], unexpected: list[str]) -> str | None:
    """The entry holding the weights when ``unexpected`` are a training checkpoint's top-level
    keys (the checkpoint dict was passed, not its state dict), else None: an entry named after the
    weights beside the run's other entries, or (round 10) alone where every key the model misses
    is a weight's (dotted): a dict that only wraps the weights, {'state_dict': ...}."""
    if not unexpected or any("." in key for key in unexpected):
        return None
    # a key named after the weights: one of the usual names, or "<net>_state_dict" that is not the
    # optimizer's or the scheduler's
    weights = [key for key in WEIGHT_ENTRIES if key in unexpected] + [
        key for key in unexpected
        if key.endswith("state_dict") and not re.search(r"optim|sched|scaler", key)
    ]
    training = [key for key in unexpected if key in TRAINING_ENTRIES or re.search(r"optim|sched", key)]
    wrapper_only = len(unexpected) == 1 and len(missing) >= 2 and all("." in key for key in missing)
    return weights[0] if weights and (training or wrapper_only) else None


# A wrapper's prefix a loader strips by position (k[7:] for "module.", k[10:] for "_orig_mod.")
PREFIX_LENGTHS = {len("module."): "module.", len("_orig_mod."): "_orig_mod."}


def cut_keys(missing: list[str], unexpected: list[str]) -> int | None:
    """Round 10: the number of leading characters cut off every key, when each key the file has is
    a key the model wants with its first n characters gone ("layer_list.0.cl" arriving as
    "ist.0.cl", "t" as ""): the code that loads strips a prefix by position from keys that never
    had it. Needs most of the keys on both sides to pair up one to one; None otherwise."""
    if len(unexpected) < 2 or len(missing) < len(unexpected):
        return None
    probe = max(unexpected, key=len)  # the longest cut key pairs with fewest model keys
    for n in sorted({len(key) - len(probe) for key in missing if key.endswith(probe)}):
        if n > 0 and sorted(key[n:] for key in missing if key[n:] in unexpected) == sorted(unexpected):
            return n
    return None


def cut_keys_reading(n: int, example: tuple[str, str]) -> tuple[str, str]:
    """(cause, fix) for keys cut by ``n`` characters; ``example`` is one (model key, key in the file)."""
    prefix = PREFIX_LENGTHS.get(n)
    meant = f" (the length of '{prefix}', the prefix a wrapper adds)" if prefix else ""
    return (
        f"the code that loads the file cuts the first {n} characters off every key{meant}, but these keys"
        f" never had that prefix, so real characters are cut ('{example[0]}' arrives as '{example[1]}'):"
        " the checkpoint was saved from the bare model, where the loading code expects one saved from"
        " a wrapper (DataParallel/DistributedDataParallel on several GPUs)",
        "strip the prefix only where a key has it: state = {k.removeprefix("
        + repr(prefix or "module.")
        + "): v for k, v in state.items()} instead of k[" + str(n) + ":]",
    )
