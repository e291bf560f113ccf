"""What kind of object a name holds, from the call that built it or, failing that, its name.

>>> classify(built_from="torch.optim.AdamW", name="opt", module_classes=frozenset())
'optimizer'
>>> classify(built_from=None, name="val_loader", module_classes=frozenset())
'loader'
>>> classify(built_from=None, name="model_path", module_classes=frozenset())
"""

from __future__ import annotations

import re

OPTIMIZER_CLASSES = frozenset(
    "SGD Adam AdamW Adamax Adagrad Adadelta RMSprop Rprop NAdam RAdam LBFGS SparseAdam "
    "ASGD Adafactor Lion ZeroRedundancyOptimizer".split()
)
SCHEDULER_CLASSES = frozenset(
    "StepLR MultiStepLR ExponentialLR CosineAnnealingLR CosineAnnealingWarmRestarts OneCycleLR "
    "LambdaLR MultiplicativeLR CyclicLR ReduceLROnPlateau LinearLR ConstantLR PolynomialLR "
    "SequentialLR ChainedScheduler SWALR".split()
)

# Name fallbacks for objects built elsewhere (passed in as parameters, returned by helpers).
_NAME_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("scheduler", re.compile(r"sched|lr_policy", re.I)),
    ("scaler", re.compile(r"scaler", re.I)),
    ("optimizer", re.compile(r"^(opt|optim|optimizer|optimiser)(_\w+)?$|_opt(im(izer)?)?$", re.I)),
    ("loader", re.compile(r"loader|^dl(_\w+)?$|_dl$|batches", re.I)),
    ("model", re.compile(r"model|^net|net$|network|encoder|decoder|classifier|backbone", re.I)),
)
# `model_path`, `optimizer_state`, `loader_kwargs` name something about the object, not it.
_ABOUT_SUFFIXES = re.compile(
    r"_(path|dir|name|file|state|state_dict|sd|cfg|config|args|kwargs|type|id|params|url)$", re.I
)


def _is_library_module(qualname: str) -> bool:
    """``torch.nn.Linear(...)``, ``torchvision.models.resnet18(...)``; not losses."""
    if qualname.startswith("torchvision.models."):
        return True
    last = qualname.rsplit(".", 1)[-1]
    if last in {"Parameter", "Buffer", "UninitializedParameter"} or last.endswith("Loss"):
        return False
    return qualname.startswith("torch.nn.") and last[:1].isupper()


def classify(*, built_from: str | None, name: str, module_classes: frozenset[str]) -> str | None:
    """optimizer, scheduler, scaler, loader, model or state (a state dict); None if unknown.

    ``built_from`` is the qualified name of the constructor (``torch.optim.SGD``), ``name``
    the last part of the variable's name, ``module_classes`` the nn.Module subclasses of the
    file.
    """
    if built_from:
        last = built_from.rsplit(".", 1)[-1]
        if last == "AveragedModel":
            return "model"
        if last in SCHEDULER_CLASSES or "lr_scheduler" in built_from or "schedule" in last:
            return "scheduler"
        if last in OPTIMIZER_CLASSES or built_from.startswith("torch.optim."):
            return "optimizer"
        if last == "GradScaler":
            return "scaler"
        if last == "DataLoader":
            return "loader"
        if last == "state_dict":
            return "state"
        if last in module_classes or _is_library_module(built_from):
            return "model"
    if _ABOUT_SUFFIXES.search(name):
        return None
    return next((kind for kind, pattern in _NAME_KINDS if pattern.search(name)), None)
