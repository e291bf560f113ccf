"""Known errors of restoring a Lightning module from a checkpoint (and of resuming from a path
that does not exist, which Lightning only warns about).

``LightningModule.load_from_checkpoint(path)`` is a classmethod: it builds a new instance by
calling the class's ``__init__`` with the hyperparameters saved in the checkpoint (those
``self.save_hyperparameters()`` recorded), then loads the weights. An ``__init__`` argument that
was never saved is missing from that call. The message names the argument; the paste shows the
call went through load_from_checkpoint.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _through_load_from_checkpoint(match: re.Match[str], text: str) -> bool:
    return "load_from_checkpoint" in text


def _missing_hparams(match: re.Match[str], text: str) -> Explanation:
    names = re.findall(r"'(\w+)'", match.group(2))
    listed = ", ".join(names)
    passed = ", ".join(f"{name}=..." for name in names)
    return answer(
        title=f"load_from_checkpoint could not rebuild the model: __init__ needs {listed}",
        meaning=(
            "load_from_checkpoint creates the model itself, calling __init__ with the"
            f" hyperparameters stored in the checkpoint; {listed} was not among them."
        ),
        cause=(
            "The LightningModule's __init__ never called self.save_hyperparameters(), so the"
            f" checkpoint holds no {listed} (or saved only some arguments, or __init__ gained"
            " arguments after the checkpoint was written). Calling it on an instance (model ="
            " Net().load_from_checkpoint(path)) does not help: it is a classmethod and builds a"
            " new object."
        ),
        fix=(
            f"Pass the missing arguments: YourModule.load_from_checkpoint(path, {passed}); and add"
            " self.save_hyperparameters() to __init__ so future checkpoints carry them. Or build"
            " the model yourself and load only the weights: model = YourModule(...);"
            " model.load_state_dict(torch.load(path)['state_dict'])."
        ),
    )


def _no_checkpoint_file(match: re.Match[str], text: str) -> Explanation:
    # Hydra runs each job in outputs/<date>/<time> and parses key=value overrides
    hydra = re.search(r"outputs[\\/]\d{4}-\d{2}-\d{2}[\\/]\d{2}-\d{2}-\d{2}|\bhydra\b", text, re.IGNORECASE)
    return answer(
        title="Lightning found no checkpoint at the path given to resume from, and starts from scratch",
        meaning=(
            "resume_from_checkpoint (ckpt_path in newer Lightning) names a file that does not exist"
            " from the process's working directory; Lightning only warns and trains from the start."
        ),
        cause=(
            "The path is relative and the run's working directory is another one: Hydra starts each"
            " run in a new outputs/<date>/<time> folder, so a relative path points there; and a"
            " file name with '=' (epoch=N-step=N.ckpt) is split by Hydra's key=value overrides."
            if hydra
            else "The path does not exist from the working directory the run starts in: a relative"
            " path written for another folder, a typo, or a file name the shell or a config parser"
            " split (a name with '=')."
        ),
        fix=(
            "Pass the checkpoint's absolute path, quoted (and with Hydra, escape or avoid '=' in the"
            " name: rename the .ckpt, or hydra.utils.to_absolute_path); check with ls that it exists."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "lightning-checkpoint-not-found",
        r"No checkpoint file exists at `?resume_from_checkpoint`?",
        _no_checkpoint_file,
    ),
    known(
        "lightning-missing-hparams",
        r"__init__\(\) missing (\d+) required positional arguments?: ((?:'\w+'(?:,? (?:and )?)?)+)",
        _missing_hparams,
        when=_through_load_from_checkpoint,
    ),
]
