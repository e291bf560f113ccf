"""The rules, grouped by theme; each rule is one function with a docstring (why + fix).

>>> sorted(all_rules())[:3]
['TW101', 'TW102', 'TW103']
"""

from __future__ import annotations

from torchwise.lint.registry import RULES, Rule


def all_rules() -> dict[str, Rule]:
    """Every registered rule, by code, in code order."""
    # Importing the theme modules registers their rules.
    from torchwise.lint.rules import (  # noqa: F401
        amp,
        autograd,
        checkpoint,
        clipping,
        config_keys,
        data,
        device,
        device_model,
        eval_forward,
        eval_loader,
        eval_shuffle,
        evaluation,
        flow,
        hygiene,
        int_division,
        legacy,
        loop,
        loss_history,
        optimizer,
        options,
        rank_state,
        removed,
        resume,
        resume_best,
        resume_bookkeeping,
        resume_epoch,
        resume_milestones,
        sampler_epoch,
        saving,
        schedule,
        selection,
        sharded_eval,
        shared_grads,
        syncs,
        train_mode,
        wrappers,
    )

    return dict(sorted(RULES.items()))
