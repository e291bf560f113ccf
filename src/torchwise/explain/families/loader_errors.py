"""Known errors of DataLoader worker processes that cannot find the dataset's class.

``Can't get attribute 'X' on <module '__main__' ...>`` is pickle, in a process that re-imports
the main script (spawn: Windows, macOS, notebooks) and does not find a class that lived only in
the parent's ``__main__``. The module it names tells where the class was: ``(built-in)`` is an
interactive session or notebook, ``__mp_main__ from 'train.py'`` a script whose class is defined
under ``if __name__ == '__main__':`` or inside a function. The frames say who unpickles: a
DataLoader worker (``multiprocessing/spawn.py``) or ``torch.load`` of a whole pickled model.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

LOADING = re.compile(r"torch\.load\(|serialization\.py|_load\(|pickle\.load\(")
SPAWNING = re.compile(r"spawn\.py|spawn_main|DataLoader|dataloader|num_workers|multiprocessing")


def _who_unpickles(text: str) -> str | None:
    if SPAWNING.search(text):
        return "worker"
    if LOADING.search(text):
        return "load"
    return None


def _worker_or_load(match: re.Match[str], text: str) -> bool:
    return _who_unpickles(text) is not None or match.group(2) == "__mp_main__"


def _main_attribute(match: re.Match[str], text: str) -> Explanation:
    name, module, where = match.group(1), match.group(2), match.group(3) or ""
    notebook = "built-in" in where
    if _who_unpickles(text) == "load":
        return answer(
            title=f"torch.load cannot find the class {name} the model was pickled with",
            meaning=(
                f"The file holds a whole pickled object whose class {name} was defined in the"
                " __main__ script that saved it; unpickling looks for it in this __main__."
            ),
            cause=f"The checkpoint was saved with torch.save(model) from a script that defined {name} itself.",
            fix=(
                f"Define or import {name} in the loading script before torch.load (from model import"
                f" {name}); better, save model.state_dict() and load it into a model built in code."
            ),
        )
    if notebook:
        cause = (
            f"{name} is defined in the notebook or interactive session. DataLoader workers are"
            " started with spawn (the default on Windows and macOS), re-import the main module,"
            f" and a notebook's cells are not importable, so {name} does not exist there."
        )
        fix = (
            f"Move {name} (and the functions it uses) into a .py file next to the notebook and"
            " import it (from my_dataset import " + name + "), or use num_workers=0."
        )
    else:
        cause = (
            f"{name} is defined where a re-import of the script does not define it: under"
            " if __name__ == '__main__': or inside a function. Spawned DataLoader workers"
            f" (Windows, macOS) import the script as {module} and find no {name} there."
        )
        fix = (
            f"Define {name} at the top level of the script (or in its own module) and keep only"
            " the code that runs (building the loaders, the training loop) under"
            " if __name__ == '__main__':; or use num_workers=0."
        )
    return answer(
        title=f"A DataLoader worker cannot find the class {name} ({module} of the main script)",
        meaning=(
            "Each worker process unpickles the dataset, which looks its class up by module and"
            f" name; {module} in the worker has no {name}."
        ),
        cause=cause,
        fix=fix,
    )


def _cuda_in_fork(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="CUDA was used in a process started with fork after the parent had initialised it",
        meaning=(
            "A CUDA context cannot be carried into a forked child; fork is the default start method"
            " on Linux, for DataLoader workers and multiprocessing alike."
        ),
        cause=(
            "Code that runs in a worker process uses the GPU: a Dataset's __getitem__ or"
            " collate_fn that moves tensors to CUDA or runs a CUDA op (a CUDA point-cloud voxeliser,"
            " a model call), or a multiprocessing.Pool task, after the main process touched CUDA."
        ),
        fix=(
            "Keep the workers on the CPU (return CPU tensors, move the batch to the GPU in the"
            " training loop; use the library's CPU version of the op), or start the workers with"
            " spawn: DataLoader(..., multiprocessing_context='spawn') /"
            " torch.multiprocessing.set_start_method('spawn')."
        ),
    )

KNOWN: list[KnownError] = [
    known(
        "main-class-not-found",
        r"Can't get attribute '(\w+)' on <module '(__main__|__mp_main__)'( \(built-in\)| from [^>]*)?>",
        _main_attribute,
        when=_worker_or_load,
    ),
    known("cuda-in-forked-process", r"Cannot re-initialize CUDA in forked subprocess", _cuda_in_fork),
]
