"""Known errors of an LR scheduler built over an optimizer whose groups lack what it reads.

A scheduler reads each param group's ``lr`` (and, when resuming with ``last_epoch`` >= 0, the
``initial_lr`` it wrote there when first built). Two messages say which is missing:
"param 'initial_lr' is not specified in param_groups[0] when resuming an optimizer" (a scheduler
built with ``last_epoch=N`` over a fresh optimizer), and ``KeyError: 'lr'`` raised in torch's
``lr_scheduler.py`` (the object given as optimizer is a wrapper whose groups are not the real
optimizer's).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import frames


def _initial_lr(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A scheduler was built to resume (last_epoch >= 0) over an optimizer that was not restored",
        meaning=(
            "With last_epoch set, a scheduler continues a schedule and reads each group's initial_lr,"
            " which a scheduler writes into the optimizer's groups when first built; these groups have none."
        ),
        cause=(
            "The resume code passes the saved epoch/iteration as last_epoch to a new scheduler, but"
            " the optimizer is a fresh one (its state_dict not loaded, or loaded after the scheduler"
            " was built, or the checkpoint holds no optimizer)."
        ),
        fix=(
            "Build the scheduler with last_epoch=-1 and restore it: scheduler.load_state_dict(ckpt['scheduler'])"
            " after optimizer.load_state_dict(ckpt['optimizer']); or load the optimizer state before"
            " building the scheduler; or set group['initial_lr'] = group['lr'] for each group first."
        ),
    )


def _in_scheduler(match: re.Match[str], text: str) -> bool:
    inside = [frame for _, frame in frames(text[: match.start()])]
    return bool(inside) and bool(re.search(r"lr_scheduler\.py$", inside[-1].file))


def _no_lr(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="The scheduler's optimizer has param groups without 'lr': it is not a torch optimizer",
        meaning=(
            "torch's LR scheduler reads group['lr'] from optimizer.param_groups when it is built; the"
            " object it was given has groups without it."
        ),
        cause=(
            "The optimizer passed to the scheduler is a wrapper (a distributed/meta-learning/lookahead"
            " wrapper, or an object built from plain dicts) whose param_groups are not the inner"
            " optimizer's, or the groups were built by hand without an lr."
        ),
        fix=(
            "Give the scheduler the real optimizer inside the wrapper (e.g. wrapper.opt / wrapper.optimizer),"
            " or give every param group an 'lr' (or the optimizer a default lr)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "scheduler-resume-without-initial-lr",
        r"param 'initial_lr' is not specified in param_groups\[\d+\] when resuming an optimizer",
        _initial_lr,
    ),
    known("scheduler-groups-without-lr", r"KeyError: 'lr'", _no_lr, when=_in_scheduler),
]
