"""The numbers behind `torchwise diagnose`, in one place, each with the reason for its value.

The measures they apply to (all from `metrics.jsonl`, train lines, in order):

- ``start`` / ``end``: the mean training loss of the first / last `EDGE_POINTS` log lines.
- ``drop``: ``(start - end) / start``, the share of the starting loss the run removed.
- ``roughness``: the median of ``|l[i] - l[i-1]| / l[i-1]`` over the second half of the
  training-loss lines: how much the loss jumps between two log lines once past the first drop.
- ``tail_change``: the relative change of the loss over the last third of the lines.

How they were checked beyond the planted runs of the tests: see README, "Diagnose a run".
"""

from __future__ import annotations

EDGE_POINTS = 3
"""Log lines averaged for ``start`` and ``end``: one noisy line must not decide a verdict."""

MIN_POINTS = 6
"""Fewer training-loss lines than this: too short a run to judge its curve (no curve finding)."""

DIVERGING_RATIO = 1.1
"""``end > start * 1.1``: the run ended worse than it began; an optimiser that is working does
not do that, whatever the data."""

FLAT_DROP = 0.1
"""``drop < 0.1``: less than a tenth of the starting loss removed over the whole run is "flat"
(a healthy run on any of our checks removed more than half)."""

SLOW_DROP = 0.5
"""``drop < 0.5``: the run kept more than half its starting loss; with a jumpy curve that points
at a too-high LR, with a settled one at underfitting."""

VERY_ROUGH = 0.5
"""``roughness > 0.5``: the loss jumps by half its value between log lines: the steps overshoot,
whatever the overall drop (a run at a 500x too-high LR measured 1.7)."""

SPIKE = 3.0
"""A training-loss line more than 3x the first one: the loss blew up mid-run even if a decaying
schedule brought it back (a digits run at AdamW lr=0.5 peaked at 29x its first line; healthy
runs never rose above their first line)."""

ROUGH = 0.15
"""``roughness > 0.15``: the loss jumps by more than 15% between log lines (each the mean of
`log.every_n_steps` steps) after the first half: the steps overshoot. Healthy runs measured
under 0.1, mostly under 0.05."""

PLATEAU_CHANGE = 0.05
"""``|tail_change| < 0.05``: less than 5% change over the last third of the run: a plateau."""

UNDERFIT_VAL_GAP = 1.2
"""Underfitting needs validation and training loss alike: ``val_end <= 1.2 * train_end``."""

OVERFIT_EVALS = 3
"""Overfitting: the validation loss rose for at least 3 evaluations in a row after its best ..."""

OVERFIT_RISE = 1.05
"""... ending at least 5% above its best, ..."""

OVERFIT_TRAIN_FALL = 0.9
"""... while the training loss fell by at least 10% over the same evaluations. The finding is
`info`, not `warn`, when early stopping ended the run: checkpoints/best holds the best of what it
monitored (with val_accuracy, maybe an epoch before the validation loss's best), so the remedy
was already in place (the digits example itself ends so)."""

UPDATE_RATIO_LOW = 1e-4
"""Median ``|update| / |weight|`` below 1e-4 per step: the weights hardly move (the classic rule
of thumb puts a healthy ratio near 1e-3; Adam-family runs sit higher, so only "low" is used).
When grad stats were logged, a flat curve is `lr_too_low` only below this ratio, and a flat
curve with weights that do move is `underfitting`."""

VANISHING_RATIO = 1e-3
"""The first layer's gradient norm below 1/1000 of the last layer's (median over the logged
steps): the early layers learn a thousand times slower than the late ones."""

CLIP_FACTOR = 10.0
"""Exploding gradients: the median pre-clip norm of the last third of the run above 10x
``train.clip_grad_norm`` (every step is then cut to a tenth or less; clipping now and then is
normal, a small model's norm sits near 1-3 with the default clip of 1) ..."""

NORM_GROWTH = 10.0
"""... or the median gradient norm of the last third 10x that of the first third."""

DATA_BOUND_SHARE = 0.5
"""Data-bound: more than half of the step time spent waiting for the next batch (warn)."""

DATA_WAIT_NOTE = 0.25
"""A quarter or more of the step time waiting for data is worth a note (info)."""

DEAD_SHARE = 0.5
"""Dead units: a layer where more than half of the output units got an all-zero gradient on
each of the last logged grad-stats steps."""

CHANCE_LOSS_BAND = 0.1
"""Chance level: the final training loss within 10% of ``ln(C)``, the cross-entropy of a uniform
guess over C classes (a digits MLP blown up at lr=5 ended at 2.33 against ln(10) = 2.30; healthy
digits runs end under a tenth of it) ..."""

CHANCE_ACCURACY = 1.5
"""... and, where validation accuracy was logged, every one of them under 1.5x the 1/C of a guess
(a one-unit bottleneck on 4 blobs ended at 23% but had reached 41%: its output does depend on
the input, and underfitting says why); without accuracy, a training loss never 10% below ln(C)."""

EARLY_BLOWUP = 10.0
"""A first logged training loss over 10x ``ln(C)``: the loss blew up inside the first log window,
before any line could show a spike (a fresh classifier starts near ln(C))."""
