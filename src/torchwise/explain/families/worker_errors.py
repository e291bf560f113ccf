"""Known errors from the DataLoader: its samples, and the worker processes (how they start,
talk and die).

Workers are separate processes. With the spawn start method (Windows, macOS) everything they
need is pickled and the main script is re-imported in each; batches come back through shared
memory, one file descriptor per tensor.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known, sentence

SIGNALS = {
    "Bus error": (
        "it ran out of shared memory (/dev/shm), which workers use to hand batches over",
        "give the container more shared memory: docker run --shm-size=8g ... (or --ipc=host);"
        " in Kubernetes mount an emptyDir with medium: Memory at /dev/shm. As a stopgap use"
        " fewer workers or num_workers=0.",
    ),
    "Killed": (
        "the kernel's out-of-memory killer stopped it: the machine ran out of RAM",
        "use fewer workers (each holds a copy of the dataset object), load samples lazily from"
        " disk instead of holding them in memory, or lower prefetch_factor.",
    ),
    "Segmentation fault": (
        "native code crashed inside the worker"
        " (an image or data library, or a fork-unsafe library)",
        "run with num_workers=0 to get the real traceback; try"
        " multiprocessing_context='spawn' on the DataLoader.",
    ),
}


def _worker_killed(match: re.Match[str], text: str) -> Explanation:
    pid, signal = match.group(1), match.group(2).strip()
    cause, fix = SIGNALS.get(
        signal,
        ("the worker process died", "run with num_workers=0 to see the error inside the worker."),
    )
    return answer(
        title=f"A DataLoader worker (pid {pid}) was killed by signal {signal}",
        meaning=f"A worker process that loads batches died from {signal}, so the loader stopped.",
        cause=sentence(cause),
        fix=sentence(fix),
    )




# Where the pickling happened: handing the dataset to workers, or writing a checkpoint.
IN_WORKERS = re.compile(r"dataloader|worker|ForkingPickler|reduction\.py|spawn", re.IGNORECASE)
IN_SAVE = re.compile(r"torch\.save|serialization\.py|pickle\.dumps?\(|\bsav(?:e|ing)\b|checkpoint")


def _pickle_in_save(name: str, unpicklable: str | None) -> Explanation:
    what = f"an open {unpicklable} object" if unpicklable else name
    return answer(
        title=f"torch.save could not pickle {what}",
        meaning=(
            "torch.save pickles everything it is given; an object that holds a lambda, a"
            " locally defined function (a hook) or an open file/writer/lock cannot be pickled."
        ),
        cause=(
            f"The saved object holds {what}: a whole model saved with torch.save(model) whose"
            " modules keep hooks or lambdas, or a checkpoint dict with a non-tensor entry (a"
            " SummaryWriter, a logger, a file handle, a dataloader)."
        ),
        fix=(
            "Save state, not objects: torch.save({'model': model.state_dict(), 'optimizer':"
            " optimizer.state_dict(), 'epoch': epoch}, path), and rebuild the model from code"
            " when loading. Keep writers and loggers out of the checkpoint."
        ),
    )


def _pickle_unknown(name: str) -> Explanation:
    return answer(
        title=f"{name} cannot be pickled",
        meaning=(
            "Pickle stores functions by their importable name; a lambda or a function defined"
            " inside another function has none, so whatever holds it cannot be pickled."
        ),
        cause=(
            f"{name} is a lambda or a function made inside a function, kept by an object that"
            " something pickles: a module that stores it (self.act = lambda ...) in a model saved"
            " whole with torch.save(model) or copied with copy.deepcopy, or a transform or"
            " collate_fn sent to DataLoader workers (num_workers > 0 with spawn)."
        ),
        fix=(
            "Define it at module level or as a class with __call__ (an activation as an"
            " nn.Module, e.g. nn.GELU()); save model.state_dict() rather than the whole model;"
            " for DataLoader workers, num_workers=0 avoids pickling meanwhile."
        ),
    )


def _pickle_local(match: re.Match[str], text: str) -> Explanation:
    unpicklable = match.group(3)
    name = match.group(1) or match.group(2) or unpicklable or "a lambda"
    if not IN_WORKERS.search(text) and (unpicklable or IN_SAVE.search(text)):
        return _pickle_in_save(name, unpicklable)
    # nothing says who pickled it: a local class is most often a Dataset sent to the workers,
    # but a lambda may as well sit in a model that is saved or copied, so do not guess
    local_class = re.search(r"<locals>\.[A-Z]\w*'?$", name) is not None
    if not IN_WORKERS.search(text) and not local_class and "Can't get local object" not in text:
        return _pickle_unknown(name)
    return answer(
        title=f"A DataLoader worker could not receive {name}",
        meaning=(
            "With the spawn start method (the default on Windows and macOS, and what"
            " multiprocessing_context='spawn' asks for) the dataset, its transforms and the"
            " collate_fn are pickled and sent to every worker. Pickle stores functions by their"
            " importable name; a lambda or a function defined inside another function has none."
        ),
        cause=(
            f"{name} is a class defined inside a function (most often the Dataset itself), used"
            " with num_workers > 0."
            if local_class
            else f"{name} is a lambda or a function defined inside a function (a transform, a"
            " target_transform or a collate_fn), used with num_workers > 0."
        ),
        fix=(
            "Define it at module level (def collate(batch): ... at the top of the file) or as a"
            " class with __call__; functools.partial of a module-level function also pickles."
            " num_workers=0 avoids pickling altogether, at the cost of loading in the main process."
        ),
    )


def _open_files(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The process ran out of file descriptors for tensors shared with workers",
        meaning=(
            "Each tensor a worker sends back lives in shared memory held open by a file"
            " descriptor until the tensor is freed; the process hit its limit (ulimit -n)."
        ),
        cause=(
            "Batches (or tensors from them) kept in a list across the epoch hold their shared"
            " memory open; many workers with a large prefetch add to it."
        ),
        fix=(
            "Keep copies, not the shared tensors: store t.clone() (or t.tolist() / .numpy()"
            " copies) instead of appending the batch tensors themselves; raise the limit (ulimit"
            " -n 65535 in the shell that starts training); or switch the sharing strategy at"
            " start-up: torch.multiprocessing.set_sharing_strategy('file_system')."
        ),
    )


def _bootstrapping(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="Worker processes started at import time (missing __main__ guard)",
        meaning=(
            "With the spawn start method (Windows, macOS) each DataLoader worker re-imports your"
            " script; unguarded top-level code starts workers again from inside a worker."
        ),
        cause="The training code runs at the top level of the script, not under a main guard.",
        fix=(
            "Move the code into a function and call it under the guard:\n"
            "    def main():\n"
            "        ...  # build data, model, train\n"
            "\n"
            '    if __name__ == "__main__":\n'
            "        main()"
        ),
    )


def _empty_dataset(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The dataset is empty (num_samples=0)",
        meaning="A shuffling DataLoader's RandomSampler needs at least one sample; len(dataset) is 0.",
        cause=(
            "The dataset found no files: a wrong root path or pattern (relative to another"
            " working directory), a split or filter that removed everything, or a __len__ that"
            " returns 0."
        ),
        fix=(
            "Print len(dataset) and the path it reads before building the loader; use an"
            " absolute path or one relative to the script (Path(__file__).parent / 'data')."
        ),
    )


def _collate_type(match: re.Match[str], text: str) -> Explanation:
    if match.group(2):
        return _collate_numpy_strings(match.group(2))
    found = match.group(1)
    name = found.rsplit(".", 1)[-1]
    if "PIL" in found or "Image" in name:
        cause = (
            "The dataset returns PIL images: no transform turns them into tensors (the"
            " transform list lacks transforms.ToTensor(), or the dataset was built without"
            " transform=...)."
        )
        fix = (
            "Add transforms.ToTensor() (v2: transforms.PILToTensor() + ToDtype) at the end of"
            " the dataset's transform, and check that __getitem__ applies it."
        )
    elif name == "NoneType":
        cause = (
            "__getitem__ returned None for some sample (a branch without return, an unreadable"
            " file skipped by returning None, a missing annotation)."
        )
        fix = (
            "Make __getitem__ return a value on every path; to drop bad samples filter them"
            " out when building the dataset, or use a collate_fn that removes None:"
            " collate_fn=lambda b: default_collate([s for s in b if s is not None])."
        )
    else:
        cause = (
            f"The samples contain {name} objects, which default_collate cannot stack (custom"
            " objects, graph data, detection records)."
        )
        fix = (
            "Convert them to tensors in __getitem__, or pass the collate_fn that belongs to"
            " that data type (the library's own loader/collate, or collate_fn=lambda b: b to"
            " keep the list)."
        )
    return answer(
        title=f"The DataLoader cannot batch {name} samples",
        meaning=(
            "default_collate stacks samples that are tensors, NumPy arrays, numbers, strings or"
            f" dicts/lists of those; a sample held {found}."
        ),
        cause=cause,
        fix=fix,
    )


def _collate_numpy_strings(dtype: str) -> Explanation:
    """``found <U14``: default_collate names a NumPy array's dtype, not a class, when the array holds
    strings (``<U``, ``|S``) or Python objects, which it cannot turn into a tensor."""
    held = "Python objects" if dtype == "object" else "strings"
    return answer(
        title=f"The DataLoader cannot batch a NumPy array of {held} (dtype {dtype})",
        meaning=(
            "default_collate turns NumPy arrays into tensors, which hold numbers only; a sample held"
            f" an array of dtype {dtype}, an array of {held}."
        ),
        cause=(
            f"__getitem__ returns a NumPy array of {held} in each sample: names, file paths or labels"
            " read as text (np.array of strings, a pandas column's .values)."
        ),
        fix=(
            "Return them as Python values instead (str, or a list of str: default_collate keeps those as"
            " lists), convert labels to numbers in __getitem__, drop the field, or pass a collate_fn"
            " that leaves it as it is."
        ),
    )


def _worker_shared_memory(match: re.Match[str], text: str) -> Explanation:
    cause, fix = SIGNALS["Bus error"]
    return answer(
        title="DataLoader workers ran out of shared memory (/dev/shm)",
        meaning=(
            "Workers hand each batch to the main process through shared memory; writing a batch"
            " there failed because /dev/shm is full or too small."
        ),
        cause=sentence(cause) + " Docker gives a container 64 MB by default.",
        fix=sentence(fix),
    )


def _worker_segfault(match: re.Match[str], text: str) -> Explanation:
    cause, fix = SIGNALS["Segmentation fault"]
    return answer(
        title="A DataLoader worker crashed with a segmentation fault",
        meaning="Native code running inside a worker process crashed, so the loader stopped.",
        cause=sentence(cause),
        fix=sentence(fix),
    )


def _worker_exited(match: re.Match[str], text: str) -> Explanation:
    pids, code = match.group(1), match.group(2)
    how = f" with exit code {code}" if code else ""
    return answer(
        title=f"A DataLoader worker (pid {pids}) exited unexpectedly{how}",
        meaning=(
            "A worker process that loads batches ended without handing back its error, so the"
            " loader can only say that it is gone."
        ),
        cause=(
            "Something inside the worker failed: an exception in __getitem__ or the transforms"
            " (exit code 1), the machine's RAM or /dev/shm running out (a signal: look above in"
            " the log for 'killed by signal' or a bus error), or a crash in native code."
        ),
        fix=(
            "Rerun with num_workers=0: the same code then runs in the main process and shows the"
            " real error and its line. If it only fails with workers, use fewer workers and"
            " check free memory and df -h /dev/shm."
        ),
    )


def _shm_manager(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="torch_shm_manager could not be started",
        meaning=(
            "DataLoader workers hand batches over in shared memory, set up by the torch_shm_manager"
            " program that ships in torch/bin; starting it failed."
        ),
        cause=(
            "The program cannot run: the install lost its execute permission (copied or unpacked"
            " without modes, a read-only or noexec mount), or the install is broken."
        ),
        fix=(
            "Make it executable (chmod +x $(python -c \"import torch, os;"
            " print(os.path.join(os.path.dirname(torch.__file__), 'bin', 'torch_shm_manager'))\"))"
            " or reinstall torch; num_workers=0 avoids it meanwhile."
        ),
    )


KNOWN: list[KnownError] = [
    known("shm-manager", r"error executing torch_shm_manager", _shm_manager),
    known(
        "pickle-local-object",
        # "Cannot pickle" in some wordings; a paste may lose the closing quote
        # the name is a qualified name only: a paste that lost the quote goes on in the user's words
        r"(?:Can't|Cannot) (?:pickle|get) local object '([\w.<>]+)'?"
        r"|Can't pickle (<function <lambda>[^>]*>)"
        r"|cannot (?:serialize|pickle) '(_io\.\w+|_thread\.\w+)' object",
        _pickle_local,
    ),
    known(
        "too-many-open-files",
        r"Too many open files|received 0 items of ancdata"
        r"|unable to open shared memory object <[^>]*> in read-write mode",
        _open_files,
    ),
    known(
        "empty-dataset",
        r"num_samples should be a positive integer value, but got num_samples=0",
        _empty_dataset,
    ),
    known(
        "dataloader-worker-killed",
        r"DataLoader worker \(pid (\d+)\) is killed by signal: ([A-Za-z ]+)",
        _worker_killed,
    ),
    known(
        "spawn-bootstrapping",
        r"An attempt has been made to start a new process before the\s+current process has"
        r"\s+finished its bootstrapping phase",
        _bootstrapping,
    ),
    # a paste cut off inside the child: multiprocessing's spawn re-runs the main script
    # (prepare -> _fixup_main_from_path -> runpy.run_path) and nothing follows; that re-run
    # failing is what the missing guard does (explain6b, round 6)
    known(
        "spawn-bootstrapping",
        r"in _fixup_main_from_path\b(?![\s\S]*\w(?:Error|Exception)\b)",
        _bootstrapping,
    ),
    known(
        "collate-type",
        r"batch must contain tensors, (?:numpy arrays, )?numbers, (?:strings, )?dicts or lists;"
        # a NumPy array of strings or objects is named by its dtype ("<U14", "|S5", "object")
        r" found (?:<class '([\w.]+)'>|([<>|=]?[SUa]\d+|object)(?![\w']))",
        _collate_type,
    ),
    known(
        "worker-shared-memory",
        r"Unexpected bus error encountered in worker"
        r"|unable to write to file </torch_\d+_\d+(?:_\d+)?>: No space left on device",
        _worker_shared_memory,
    ),
    known(
        "worker-segfault",
        r"Unexpected segmentation fault encountered in worker",
        _worker_segfault,
    ),
    known(
        "worker-exited",
        r"DataLoader worker \(pid\(?s?\)? ([\d, ]+)\) exited unexpectedly(?: with exit code (-?\d+))?",
        _worker_exited,
        generic=True,
    ),
]
