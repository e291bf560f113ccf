"""Known errors of restoring a Lightning module from a checkpoint.

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


KNOWN: list[KnownError] = [
    known(
        "lightning-missing-hparams",
        r"__init__\(\) missing (\d+) required positional arguments?: ((?:'\w+'(?:,? (?:and )?)?)+)",
        _missing_hparams,
        when=_through_load_from_checkpoint,
    ),
]
