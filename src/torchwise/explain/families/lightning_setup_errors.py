"""Known errors of a Lightning Trainer set up against the wrong package or the wrong machine.

Lightning ships as two packages with the same classes: ``pytorch_lightning`` and the unified
``lightning`` (``lightning.pytorch``). A LightningModule of one is not an instance of the other's,
so ``lightning.Trainer().fit(model)`` with a ``pytorch_lightning.LightningModule`` (or the reverse)
raises "`model` must be a `LightningModule` or `torch._dynamo.OptimizedModule`, got `Net`". The
Trainer's device checks name the GPUs asked for and the ones torch sees.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _two_packages(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1)
    return answer(
        title=f"The Trainer does not see {name} as a LightningModule: two Lightning packages are mixed",
        meaning=(
            f"Trainer.fit checks isinstance(model, LightningModule) against its own package's class;"
            f" {name} is not an instance of it."
        ),
        cause=(
            f"{name} subclasses the LightningModule of one package (import pytorch_lightning as pl)"
            " while the Trainer comes from the other (import lightning as L / lightning.pytorch), or"
            " a library builds the model with one and the script's Trainer is the other; the two"
            " packages' classes are distinct. (A model that subclasses nn.Module only gets the same message.)"
        ),
        fix=(
            "Import both from one package everywhere: either pytorch_lightning (pl.LightningModule,"
            " pl.Trainer) or lightning.pytorch (L.LightningModule, L.Trainer), callbacks included;"
            " and make the model subclass LightningModule."
        ),
    )


def _gpus_requested(match: re.Match[str], text: str) -> Explanation:
    asked, has = match.group(1), match.group(2)
    return answer(
        title=f"The Trainer was given GPUs {asked}, and torch sees only {has}",
        meaning="Lightning checks the devices it was given against torch.cuda.device_count() before training.",
        cause=(
            "The devices/gpus setting names more GPUs than this machine (or CUDA_VISIBLE_DEVICES)"
            " leaves visible: a config written for another machine."
        ),
        fix=(
            f"Ask for what is there (devices={has if has != '[]' else 1} or devices='auto'), or make the"
            " GPUs visible (CUDA_VISIBLE_DEVICES, the scheduler's GPU request)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "lightning-two-packages",
        r"`model` must be a `LightningModule`(?: or `torch\._dynamo\.OptimizedModule`)?, got `(\w+)`",
        _two_packages,
    ),
    known(
        "lightning-gpus-unavailable",
        r"You requested gpus?: (\[[\d, ]*\])\s*But your machine only has: (\[[\d, ]*\])",
        _gpus_requested,
        re.IGNORECASE,
    ),
]
