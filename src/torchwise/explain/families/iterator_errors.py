"""Known errors of ``next()`` on an iterator that has nothing left.

``StopIteration`` is how Python's iterators say they are done; it surfaces as an error only where
code calls ``next(...)`` by hand and does not catch it (inside a generator Python 3.7+ turns it into
"RuntimeError: generator raised StopIteration"). What the ``next`` call was given tells the cause:

- ``next(batch_iterator)`` in a training loop that counts iterations, not epochs: the DataLoader's
  iterator ran dry after one pass over the data and was never re-created; ``next(iter(loader))`` on a
  fresh iterator: the loader has no batch at all (an empty dataset, or drop_last with a larger batch);
- ``next(model.parameters())`` (to read the model's device or dtype): the module has no parameters
  there, which is what a DataParallel replica's ``parameters()`` gives since torch 1.5.

A ``next`` call on anything else (a file, a user's generator) is not told here.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart

# the last next(...) call written before the error: a frame's source line in any paste format
NEXT_CALL = re.compile(r"\bnext\(\s*((?:iter\(\s*)?[\w.\[\]]+(?:\(\))?)")


def _next_call(text: str, before: int) -> str | None:
    calls = list(NEXT_CALL.finditer(text, 0, before))
    if not calls:
        return None
    called = calls[-1].group(1).strip()
    # close what the paste left open (a call cut at the end of its line)
    return called + ")" * (called.count("(") - called.count(")"))


def _exhausted(match: re.Match[str], text: str) -> Explanation | None:
    called = _next_call(text, match.start())
    if called is None:
        return None
    if re.search(r"parameters\(\)|buffers\(\)", called):
        replica = re.search(r"replica|data_parallel|DataParallel", text)
        return answer(
            title=f"next({called}) found no parameters: the module has none there",
            meaning=(
                f"The code reads a parameter (usually for its device or dtype) with next({called}),"
                " and that module's parameters() yielded nothing, so next() raised StopIteration."
            ),
            cause=(
                "It runs inside nn.DataParallel: since torch 1.5 the replicas DataParallel makes on"
                " each GPU return no parameters from parameters(), so code written for older torch"
                " (next(self.parameters()).dtype in forward) fails there."
                if replica
                else "The module it is called on holds no parameters (all its weights are plain"
                " tensors or live in another module), or it is a DataParallel replica (torch 1.5+)."
            ),
            fix=(
                "Read the device/dtype from the input instead (x.device, x.dtype) or from a buffer"
                " registered on the module, or use DistributedDataParallel (torchrun) instead of"
                " DataParallel, or the torch release the code was written for."
            ),
        )
    # a fresh iterator that has nothing at all: next(iter(loader)), a loader re-created after a first
    # StopIteration that stops again (mmcv's IterLoader), or drop_last dropping the only, short batch
    recreated = re.search(r"StopIteration\s*\n\s*During handling of the above exception", text)
    if called.startswith("iter(") or recreated or "drop_last=True" in text:
        return answer(
            title=f"next({called}) found no batch at all: the DataLoader is empty",
            meaning=(
                f"next({called}) takes the first batch of a new pass over the loader; the loader has none,"
                " so its iterator stops at once."
            ),
            cause=(
                "The dataset has no samples (an empty folder, list or split; a path or filter that matched"
                " nothing), or drop_last=True with a batch_size larger than the dataset, which leaves no"
                " full batch."
            ),
            fix=(
                "Print len(dataset) and len(loader): fix the data path or filter so the dataset has samples,"
                " or lower batch_size / set drop_last=False for a small dataset."
            ),
        )
    if re.search(r"loader|iter|batch|data", called, re.IGNORECASE) or "dataloader.py" in text:
        return answer(
            title=f"next({called}) ran out: the DataLoader's iterator is exhausted",
            meaning=(
                f"The loop draws batches with next({called}) on one iterator; a DataLoader's iterator"
                " yields len(loader) batches, one pass over the data, and then raises StopIteration."
            ),
            cause=(
                "The training loop counts iterations (steps), not epochs, and never re-creates the"
                " iterator after it has gone once through the dataset (with drop_last or a smaller"
                " dataset this comes even sooner)."
            ),
            fix=(
                "Re-create the iterator when it runs out:\n"
                "    try:\n"
                f"        batch = next({called})\n"
                "    except StopIteration:\n"
                "        it = iter(loader)  # a new pass over the data\n"
                "        batch = next(it)\n"
                "or loop over epochs with for batch in loader: ..."
            ),
        )
    return None


KNOWN: list[KnownError] = [
    told_apart(
        "next-iterator-exhausted",
        # the exception line itself (bare or in backticks), or Python 3.7's generator wrapping
        # (a traceback flattened onto one line ends "raise StopIteration StopIteration")
        r"^[\s`>]*StopIteration\b|generator raised StopIteration|\braise StopIteration\s+StopIteration\b",
        _exhausted,
        re.MULTILINE,
    ),
]
