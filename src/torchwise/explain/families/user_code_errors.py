"""Known errors that Python raises in the user's own code while it handles data: a dict without
the key the line reads, an unpacking of the wrong number of values, a value that is None, a
random sample larger than its population, a name never assigned. (Indices past the end are in
``index_errors``, which reads the frame with the helpers here.)

These messages are Python's, not torch's, so the message alone names no cause. The paste does:
the traceback's last frame in the user's own file (``paste.user_frame``) gives the file, the
line and its source, and what the line does with the value decides the answer. An entry
answers only where that frame bears it out (its source holds the key the KeyError names);
otherwise explain says it does not know. Every entry is ``generic``: a torch message anywhere
in the same paste wins over it.
"""

from __future__ import annotations

import re

from torchwise.explain.checkpoint_keys import whole_state_dict
from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import Frame, last_frame, user_frame

# The name a loaded checkpoint usually has, a batch or sample, a configuration.
CHECKPOINT_NAMES = re.compile(r"ckpt|checkpoint|state|weights|snapshot|pretrained|saved|\bsd\b", re.I)
BATCH_NAMES = re.compile(r"batch|sample|inputs?\b|targets?\b|data\b|item|example|features", re.I)
OUTPUT_NAMES = re.compile(r"result|outputs?\b|out\b|preds?\b|predictions|ret\b|losses", re.I)


def frame_of(match: re.Match[str], text: str) -> Frame | None:
    return user_frame(text, match.start())


def raised_here(match: re.Match[str], text: str) -> bool:
    """The error was raised at the user's own line, not inside a library it called: only then
    does that line's source show what failed."""
    frame = frame_of(match, text)
    return frame is not None and last_frame(text, match.start()) == frame


def place_of(match: re.Match[str], text: str) -> str:
    frame = frame_of(match, text)
    return frame.place if frame else "the line that raised"


def _holder(source: str, key: str) -> str | None:
    """The expression subscripted with ``[key]`` in ``source``: ``self.ckpt`` in
    ``load(self.ckpt['optimizer'])``."""
    # or a torch.load(...) call indexed at once: torch.load(path)['model']
    found = re.search(
        r"((?:torch\.load\((?:[^()]|\([^()]*\))*\)|[\w.]+)(?:\[[^\]]*\])*)\[\s*(?:'|\")"
        + re.escape(key)
        + r"(?:'|\")\s*\]",
        source,
    )
    return found.group(1) if found else None


def _subscript(source: str, key: str) -> tuple[str, str | None] | None:
    """(what is subscripted, the variable that holds the key) at the line: ``batch['x']`` gives
    (``batch``, None); ``cache[folder]`` gives (``cache``, ``folder``) when it is the line's only
    subscript by a name."""
    holder = _holder(source, key)
    if holder:
        return holder, None
    by_name = re.findall(r"([\w.]+)\[\s*([A-Za-z_]\w*)\s*\]", source)
    return (by_name[0][0], by_name[0][1]) if len(by_name) == 1 else None


def _key_in_source(match: re.Match[str], text: str) -> bool:
    frame = frame_of(match, text)
    if frame is None:
        return False
    if _holder(frame.source, match.group(1)) is not None:
        return True
    # a key held in a variable says which dict only where the line itself raised
    return raised_here(match, text) and _subscript(frame.source, match.group(1)) is not None


def _missing_key(match: re.Match[str], text: str) -> Explanation:
    key = match.group(1)
    frame = frame_of(match, text)
    assert frame is not None  # the guard saw it
    holder, variable = _subscript(frame.source, key) or ("the dict", None)
    name = holder.rsplit(".", 1)[-1]
    held_in = f" (the value of {variable})" if variable else ""
    if CHECKPOINT_NAMES.search(name) or holder.startswith("torch.load("):
        cause = (
            f"{holder} is a loaded checkpoint that was saved without '{key}': it holds other"
            " entries (only the model weights, or the same things under other names such as"
            " 'state_dict' or 'model'), or that part was saved to a separate file."
        )
        fix = (
            f"Print what it holds before that line: print(list({holder}.keys())). Read the entry"
            f" it has, load '{key}' from the file it was saved to, or skip it when absent"
            f" (if '{key}' in {holder}: ...).{whole_state_dict(frame.source, holder)}"
        )
    elif BATCH_NAMES.search(name):
        cause = (
            f"{holder} is a batch or sample built by the dataset (its __getitem__ or collate_fn),"
            f" and this dataset does not put '{key}' in it: the model or the loss reads an entry"
            " that this dataset, or this version of the code, does not produce."
        )
        fix = (
            f"Print list({holder}.keys()) where the batch is made; add '{key}' there, or remove"
            " the read if the code no longer needs it (compare with the version of the dataset"
            " code the loss was written for)."
        )
    elif OUTPUT_NAMES.search(name):
        cause = (
            f"{holder} is the dict a model or function returned, and it fills '{key}' only in"
            " some cases: in training but not in evaluation mode (or the other way round), under"
            " an option or config this run does not set, or in another version of the code."
        )
        fix = (
            f"Print list({holder}.keys()) before that line and look at where it is built for the"
            f" condition that adds '{key}'; read '{key}' only where it is produced"
            f" ({holder}.get('{key}') or a check on model.training)."
        )
    else:
        cause = (
            f"{holder} was filled from other data than this line expects: another dataset, split"
            " or config; a cached file (.pkl, .json, intermediate data) from an earlier run or"
            " from the project's own example data; or the key is spelt differently where it is"
            " written."
        )
        fix = (
            f"Print sorted({holder}.keys()) before that line and compare with '{key}'. Rebuild"
            " the dict from the same data (delete or turn off a cached file so it is made again),"
            " or look the key up the way it is written."
        )
    return answer(
        title=f"{holder} has no key '{key}' ({frame.place})",
        meaning=f"{frame.place} reads {holder}['{key}']{held_in}, and that dict holds no '{key}'.",
        cause=cause,
        fix=fix,
    )


def _object_key(match: re.Match[str], text: str) -> Explanation:
    key = match.group(1)
    frame = frame_of(match, text)
    place = frame.place if frame else "the line that raised"
    if frame is not None and re.search(r"state_dict\(\)\s*\[\s*['\"]state['\"]\s*\]", frame.source):
        return answer(
            title=f"An optimizer's state looked up by id(param) ({place})",
            meaning=(
                f"The key {key} is the id() of a parameter; optimizer.state_dict()['state'] is"
                " keyed by each parameter's position (0, 1, 2, ...), not by its id()."
            ),
            cause=(
                "The code was written for an older torch whose optimizer.state_dict() keyed the"
                " state by id(param); the installed torch numbers the parameters instead."
            ),
            fix=(
                "Use the torch version the code was written for, or read the live state by the"
                " parameter itself: optimizer.state[p] (or map positions to parameters in"
                " param_groups order)."
            ),
        )
    return answer(
        title=f"A dict keyed by id() has no entry for this object ({place})",
        meaning=(
            f"The key {key} is the id() of a Python object (a parameter or a tensor); the dict"
            " has no entry for that object."
        ),
        cause=(
            "The dict was built for other objects: a parameter created or replaced after it was"
            " built (a layer added or re-initialised after wrapping the model or creating the"
            " optimizer), or ids recorded in another process, checkpoint or version."
        ),
        fix=(
            "Build the model completely before wrapping it or creating the optimizer, and key by"
            " name (model.named_parameters()) or position rather than id()."
        ),
    )


def _unpack(match: re.Match[str], text: str) -> Explanation:
    expected, got = int(match.group(2)), match.group(3)
    holds = got or f"more than {expected}"
    frame = frame_of(match, text)
    place = frame.place if frame else "the line that raised"
    source = frame.source if frame else ""
    if re.search(r"=\s*[\w.\[\]()]*\.(?:shape|size\(\))", source):
        cause = (
            f"The array or tensor has {holds} dimensions where the line expects {expected}: a"
            " grayscale image (H, W) where the code expects (H, W, C), a single sample without"
            " its batch dimension, or an extra dimension (a batch of one, a channel of one)."
        )
    elif "zip(*" in source:
        cause = (
            f"Each sample in the batch holds {holds} items while the collate_fn unpacks"
            f" {expected}: the dataset's __getitem__ returns another number of values than this"
            " collate_fn was written for (a dataset changed, or a collate_fn of another dataset)."
        )
    elif re.search(r"^\s*for\b", source):
        cause = (
            f"Each item the loop iterates over holds {holds} values, and the loop unpacks"
            f" {expected}: for a DataLoader, each batch holds what the dataset's __getitem__"
            " returns, collated."
        )
    elif "__getitem__" in source or re.search(r"dataset\s*\[", source):
        cause = f"The dataset's __getitem__ returns {holds} values where this line unpacks {expected}."
    else:
        cause = (
            f"The call or value on the right holds {holds} values: a function whose return"
            " changed (another version of the code returns one more or one fewer item, or"
            " returns a single object), or a sequence of another length."
        )
    return answer(
        title=f"{place} unpacks {expected} values from something that holds {holds}",
        meaning=f"The assignment at {place} names {expected} targets; the value has {holds}.",
        cause=cause,
        fix=(
            f"Print it before that line (print(type(v), len(v))) and make both sides agree:"
            f" return exactly {expected} values where it is made, or unpack what is there"
            " (a, b, *rest = ...)."
        ),
    )


def _sample_too_large(match: re.Match[str], text: str) -> Explanation:
    place = place_of(match, text)
    return answer(
        title=f"A random sample larger than its population ({place})",
        meaning=(
            "Sampling without replacement asked for more items than the list or array holds"
            " (random.sample, np.random.choice(..., replace=False))."
        ),
        cause=(
            "The population is empty or shorter than the sample size: a sample (an image, a scan,"
            " a point cloud) with fewer valid items than the fixed count the code or config asks"
            " for (num_samples, a number of points or crops), or a filter that left nothing."
        ),
        fix=(
            "Check len(population) before sampling and skip or pad such samples; lower the count"
            " in the config to what every sample has; or sample with replacement (random.choices,"
            " np.random.choice(..., replace=True)) where repeats are acceptable."
        ),
    )


# The names scripts import under a conventional alias: undefined, they are an import the file lacks.
IMPORTED_AS = {
    "np": "import numpy as np", "nn": "import torch.nn as nn", "F": "import torch.nn.functional as F",
    "torch": "import torch", "optim": "import torch.optim as optim", "dist": "import torch.distributed as dist",
    "pd": "import pandas as pd", "plt": "import matplotlib.pyplot as plt", "os": "import os", "sys": "import sys",
    "math": "import math", "time": "import time", "json": "import json", "random": "import random",
    "re": "import re", "copy": "import copy", "glob": "import glob", "argparse": "import argparse",
    "cv2": "import cv2", "Image": "from PIL import Image", "tqdm": "from tqdm import tqdm",
    "transforms": "from torchvision import transforms", "Path": "from pathlib import Path",
    "DataLoader": "from torch.utils.data import DataLoader", "Dataset": "from torch.utils.data import Dataset",
    "Variable": "from torch.autograd import Variable",
}


def _name_not_defined(match: re.Match[str], text: str) -> Explanation:
    name, suggestion = match.group(1), match.group(2)
    place = place_of(match, text)
    if name in IMPORTED_AS:  # round 8: "assign it first" is no answer for a module never imported
        return answer(
            title=f"{name} is not imported ({place})",
            meaning=f"{place} uses {name}, a name scripts import ({IMPORTED_AS[name]}), and nothing defined it.",
            cause=f"The file (or the notebook cell that ran) lacks the import of {name}, or runs it after this line.",
            fix=f"Add `{IMPORTED_AS[name]}` at the top of the file that raised (in a notebook, run that cell first).",
        )
    typo = f" a typo (Python suggests '{suggestion}')," if suggestion else " a typo,"
    return answer(
        title=f"{name} is used before anything assigned it ({place})",
        meaning=f"{place} reads the name {name}, which is not defined in that scope when the line runs.",
        cause=(
            f"Nothing assigned {name} there first:{typo} a variable assigned only inside a branch,"
            " loop or try block that did not run (an earlier exception caught by try/except"
            " leaves it unassigned: look further up the log), a name that belongs to another"
            " function, or a module or class never imported."
        ),
        fix=(
            f"Assign {name} before that line or pass it in as an argument; if it is set inside a"
            " try block, fix the error that the except hid first."
        ),
    )


def _none_subscript(match: re.Match[str], text: str) -> Explanation:
    frame = frame_of(match, text)
    assert frame is not None
    loaded = re.search(r"load_state_dict\(\s*([\w.]+\[\s*['\"](\w+)['\"]\s*\])", frame.source)
    if loaded:
        value, key = loaded.group(1), loaded.group(2)
        return answer(
            title=f"load_state_dict got None: {value} is None ({frame.place})",
            meaning=f"{frame.place} passes {value} to load_state_dict, and the checkpoint holds None there.",
            cause=(
                f"The checkpoint was saved without the '{key}' state (None in its place): a"
                " checkpoint stripped for inference or kept as the best weights holds only the"
                " model."
            ),
            fix=(
                f"Resume from a full checkpoint (the last one saved during training), or restore"
                f" '{key}' only when present: if {value} is not None: ...load_state_dict({value})."
            ),
        )
    return answer(
        title=f"A value is None where the code subscripts it ({frame.place})",
        meaning=f"{frame.place} indexes a value (x[...]) that is None.",
        cause=(
            "Something upstream returned None: a function without a return on some path, a"
            " loader that returns None on failure (cv2.imread on a wrong path, dict.get of a"
            " missing key), or a field stored as None."
        ),
        fix=(
            "Print the value before that line and follow it back to where it is made: check paths"
            " and return statements."
        ),
    )


def _none_told(match: re.Match[str], text: str) -> bool:
    frame = frame_of(match, text)
    loaded = frame is not None and "load_state_dict(" in frame.source
    return raised_here(match, text) or loaded


def _object_not_subscriptable(match: re.Match[str], text: str) -> Explanation:
    kind = match.group(1)
    place = place_of(match, text)
    return answer(
        title=f"The checkpoint is a whole {kind} object, not a dict ({place})",
        meaning=f"{place} reads an entry of the loaded checkpoint, but torch.load returned a {kind}.",
        cause=(
            f"The file was written with torch.save(model) (the whole {kind}), while this code"
            " expects a dict such as {'epoch': ..., 'state_dict': ...}."
        ),
        fix=(
            "Either use what was loaded as the model (model = torch.load(path,"
            " weights_only=False)), or save a dict from now on: torch.save({'epoch': epoch,"
            " 'state_dict': model.state_dict()}, path)."
        ),
    )


def _checkpoint_subscripted(match: re.Match[str], text: str) -> bool:
    frame = frame_of(match, text)
    source = frame.source if frame else text[: match.start()]  # IPython may print no frame header
    return bool(re.search(r"(?:ckpt|checkpoint|state)\w*\s*\[|torch\.load\([^\n]*\)\s*\[", source, re.I))


def _no_len(match: re.Match[str], text: str) -> Explanation:
    kind = match.group(1)
    place = place_of(match, text)
    return answer(
        title=f"len() of a {kind} ({place})",
        meaning=f"{place} calls len() on a {kind}, which has no length.",
        cause=(
            f"The value is a single {kind} where the code expects a list, string or tensor: a"
            " dataset item or field that is one number where this code (a collate_fn written for"
            " another dataset) expects a sequence, or a count passed where the collection was meant."
        ),
        fix="Print type(x) and x before that line; make the dataset return sequences there, or fix the call.",
    )


KNOWN: list[KnownError] = [
    known("missing-key", r"KeyError: '([^'\n]+)'", _missing_key, generic=True, when=_key_in_source),
    known("object-id-key", r"KeyError: (\d{9,})\b", _object_key, generic=True),
    known(
        "unpack-count",
        r"ValueError: (too many values to unpack|not enough values to unpack) \(expected (\d+)(?:, got (\d+))?\)",
        _unpack,
        generic=True,
        when=raised_here,
    ),
    known(
        "sample-too-large",
        r"Sample larger than population or is negative|Cannot take a larger sample than population",
        _sample_too_large,
        generic=True,
    ),
    known(
        "name-not-defined",
        r"NameError: name '(\w+)' is not defined(?:\. Did you mean: '(\w+)'\?)?",
        _name_not_defined,
        generic=True,
        when=raised_here,
    ),
    known(
        "none-subscripted",
        r"TypeError: 'NoneType' object is not subscriptable",
        _none_subscript,
        generic=True,
        when=_none_told,
    ),
    known(
        "checkpoint-is-a-model",
        r"TypeError: '(?!NoneType')([A-Z]\w*)' object is not subscriptable",
        _object_not_subscriptable,
        generic=True,
        when=_checkpoint_subscripted,
    ),
    known("no-len", r"TypeError: object of type '(\w+)' has no len\(\)", _no_len, generic=True, when=raised_here),
]
