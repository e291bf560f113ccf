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

ROUGH_FLOOR = 0.05
"""A jump between log lines counts against the larger of the loss it left and 5% of the starting
loss: a loss fitted to 1% of its start (a clean sine forecast, a separable set) jumps by more than
its own size from batch noise alone; a run whose LR is too high bounces near where it started."""

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

EARLY_BLOWUP = 10.0
"""A first logged training loss over 10x the prior's entropy (``ln(C)`` when balanced): the loss
blew up inside the first log window, before any line could show a spike (a fresh classifier
starts near ln(C))."""

LR_MATCH = 0.05
"""The logged LR's peak within 5% of ``optim.lr``: optim.lr is the LR that ran (a warmup-cosine run
peaks just under it), so advice may name optim.lr; otherwise it names the LR that was logged."""

WARMUP_REACHED = 0.1
"""A warmup outlasted the run when the logged LR rose all run long and never reached a tenth of
optim.lr: the run trained at 10x or more below what it asked for (warmup-cosine's default 5%
warmup reaches optim.lr after 5% of the steps)."""

PRIOR_LOSS_BAND = 0.1
"""Chance level: the final training loss not even 10% below the entropy of the training labels'
prior, the cross-entropy of always predicting that prior (ln C when the classes are balanced);
a loss above it is no better (a 90/10 set with features of noise ended at 0.38 against 0.32) ..."""

PRIOR_ACCURACY_MARGIN = 0.5
"""... and every validation accuracy under ``m + 0.5 (1 - m) / (C - 1)``, m the majority class's
share: half the way from always-the-majority to the next step up (1.5/C when balanced, the rule's
earlier form; 0.95 for a 90/10 set)."""

EXPLAINED_LITTLE = 0.1
"""Regression at the mean: R^2 = 1 - loss / variance(target) under 0.1 on the training loss: the
model removed less than a tenth of what predicting the mean leaves."""

TARGET_SCALE = 1e4
"""An unstandardised target: a mean square (mean^2 + variance) of 1e4 or more, values in the
hundreds or more. An output layer starts near 0 and moves about optim.lr per Adam step, so a
target of 200,000 needs a hundred million such steps just to reach its mean."""

TARGET_FITTED = 0.9
"""... unless the run fitted it anyway: R^2 of 0.9 or more on the training loss."""

FROZEN_SHARE = 0.9
"""mostly_frozen: 90% or more of the parameters frozen, with a curve that did not fall by half
(`SLOW_DROP`): a head trained on a frozen backbone that does learn is fine-tuning, not a fault."""

BATCHNORM_MIN_BATCH = 8
"""BatchNorm on micro-batches under 8 samples: its batch statistics are too noisy (Wu & He,
"Group Normalization", 2018: BatchNorm's error rises steeply below 8 per device; at 2 samples a
BatchNorm1d output is +-1 per feature whatever the input)."""

SHIFT_JUMP = 10.0
"""data_shift: a training-loss line 10x or more the median of the three before it ..."""

SHIFT_SETTLED = 0.5
"""... after the loss had fallen to half its start, or 10% below a guess's (`PRIOR_LOSS_BAND`): the
optimiser was working at that LR (a siamese same/different model starts at ln 2 = 0.69 and had
reached 0.40 when its second shard came in raw pixels) ..."""

SHIFT_STAYS = 2.0
"""... and stayed up: the median of the lines from the jump on at least twice what it was before
(inputs rebuilt at x1000 mid-run measured 4.9x, alternating between spikes and dips); a spike
the curve comes straight back from is a batch of outliers (a heavy-tailed target), not a shift ..."""

SHIFT_LR_FALLEN = 0.999
"""... while the logged LR was below its earlier peak: the step size had not grown."""

INPUT_SCALE = 1e4
"""unscaled_inputs: an input feature whose mean square over the training set is 1e4 or more (a
root mean square in the hundreds: dollars, square feet, 0..255 pixels), the scale `TARGET_SCALE`
uses for targets; standardised features measure about 1, pixels divided by 255 under 1 ..."""

INPUTS_FITTED = 0.5
"""... unless the run fitted anyway: a training loss under half the loss of a guess (the prior's
entropy, the target's variance)."""

MISMATCH_TRAINED = 0.9
"""val_mismatch: the training loss logged by the first evaluation at least 10% below the loss of a
guess (`PRIOR_LOSS_BAND`: the model had learned something on training data; a tabular run with the
default warmup was 16% below after its first epoch) while no validation loss was below the guess:
memorising labels that carry nothing (shuffled) leaves the training loss near the guess at the
first evaluation (a bag-of-words run measured 4% below after six epochs), and overfitting has a
best validation loss below it."""

NARROW_WIDTH = 2
"""underfitting from the model's shape: a hidden layer (not the last Linear) of 1 or 2 units, that
every sample passes through in a plain stack ..."""

NARROW_UNFITTED = 0.1
"""... with a plateaued training loss still above a tenth of the loss of a guess (R^2 under 0.9
for a regressor, `TARGET_FITTED`'s line): a narrow layer the data does fit through is no fault."""

MISMATCH_WRONG = 0.5
"""val_mismatch also when every validation accuracy was under half the majority class's share
(added after round 2's held-out measurement: inverted validation digits scored 1-3% against 10%
while training was still 9% under the guess's loss at the first evaluation)."""
