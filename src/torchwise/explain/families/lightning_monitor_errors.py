"""Known errors of Lightning's callback contract: the metric a callback monitors must be logged.

ModelCheckpoint(monitor=...) and EarlyStopping(monitor=...) read the metric from the values the
module logged with self.log; when the key is missing at the moment they run, Lightning raises
(older: "ModelCheckpoint(monitor='k') not found in the returned metrics: [...]"; newer:
"`ModelCheckpoint(monitor='k')` could not find the monitored key in the returned metrics";
EarlyStopping: "Early stopping conditioned on metric `k` which is not available") with the keys
that were logged.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

MONITOR = (
    r"`?(ModelCheckpoint|EarlyStopping)\(monitor='([^']+)'\)`? (?:not found in the returned metrics"
    r"|could not find the monitored key in the returned metrics): \[([^\]]*)\]"
    r"|Early stopping conditioned on metric `([^`]+)` which is not available[^\n]*?use any of the following: ([^\n]*)"
)


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _monitor_missing(match: re.Match[str], text: str) -> Explanation:
    callback = match.group(1) or "EarlyStopping"
    key = match.group(2) or match.group(4)
    keys = re.findall(r"[`'\"]([^`'\"]+)[`'\"]", match.group(3) or match.group(5) or "")
    near = [k for k in keys if _squash(k) == _squash(key) or (_squash(key) in _squash(k) and k != key)]
    validation = [k for k in keys if re.match(r"val", k, re.IGNORECASE)]
    if near:
        cause = (
            f"A metric close to it was logged under another name: {', '.join(near)}. The monitor"
            " key must be spelled exactly as the self.log key (prefixes, '/' or '_' included;"
            " with on_step and on_epoch both set Lightning adds _step/_epoch suffixes)."
        )
        fix = f"Monitor the logged name: {callback}(monitor='{near[0]}'), or log under '{key}'."
    elif keys and not validation and re.match(r"val", key, re.IGNORECASE):
        cause = (
            "Only training metrics had been logged when the callback ran: validation had not run"
            " (or logged nothing) yet: no validation_step / val_dataloader, validation that"
            " runs less often than the checkpoint (check_val_every_n_epoch, val_check_interval,"
            " limit_val_batches=0), or the callback saving at a training epoch end before"
            " validation."
        )
        fix = (
            f"Make validation run and log it: self.log('{key}', value) in validation_step (or"
            " on_validation_epoch_end), with validation at least as often as checkpoints; or"
            f" monitor a training metric that is logged ({', '.join(keys[:3])})."
        )
    else:
        cause = (
            f"No self.log('{key}', ...) ran before the callback checked: the module logs other"
            " keys, or logs this one in a hook that has not run yet (or only on some ranks or"
            " epochs)."
        )
        fix = (
            f"Log it with exactly that name (self.log('{key}', value)) in the step or epoch-end"
            f" hook that runs before {callback} reads it, or monitor one of the logged keys."
        )
    return answer(
        title=f"{callback} monitors '{key}', which was not logged",
        meaning=(
            f"{callback}(monitor='{key}') reads that key from the metrics the LightningModule"
            " logged with self.log; at the moment it ran the key was not among them"
            + (f" (logged: {', '.join(keys)})." if keys else ".")
        ),
        cause=cause,
        fix=fix,
    )


def _plateau_without_monitor(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="ReduceLROnPlateau needs a metric to watch, and configure_optimizers names none",
        meaning=(
            "ReduceLROnPlateau lowers the LR when a metric stops improving; Lightning steps it with"
            " that metric, so configure_optimizers must say which logged key it is."
        ),
        cause=(
            "configure_optimizers returns the ReduceLROnPlateau scheduler (alone, in a list, or in"
            " a dict) without a 'monitor' key."
        ),
        fix=(
            'Return it with the metric: return {"optimizer": optimizer, "lr_scheduler": {"scheduler":'
            ' scheduler, "monitor": "val_loss"}}, naming a key the module logs with self.log (here'
            " val_loss), in the hook that runs before the scheduler steps."
        ),
    )


KNOWN: list[KnownError] = [
    known("lightning-monitor-not-logged", MONITOR, _monitor_missing),
    known(
        "lightning-plateau-no-monitor",
        r"must include a monitor when a `?ReduceLROnPlateau`? scheduler is used",
        _plateau_without_monitor,
    ),
]
