"""Every code `diagnose` can emit, its severity and when it fires: the one table that
``torchwise diagnose --help`` lists and docs/diagnose.md shows (a test checks both, and that no
check emits a code missing here). Plain data: importing it imports nothing else."""

from __future__ import annotations

CODES: dict[str, tuple[str, str]] = {
    "failed": ("error", "summary.json says the run failed: the error that stopped it, first, with `torchwise "
                        "explain`'s answer for it where known"),
    "nonfinite_input": ("error", "a NaN/inf loss whose batch held NaN/inf in its inputs (the loop checks the "
                                 "batch when it stops): the data, not the step size"),
    "nonfinite": ("error", "a NaN/inf loss or gradient from finite inputs (event, or a null loss line); names "
                           "the first module whose output was not finite, or the loss computation when every "
                           "output was finite and the loss was not"),
    "diverging": ("error", "the training loss ends above 1.1x where it started"),
    "chance_level": ("error", "a classifier whose training loss ends less than 10% below the loss of always "
                              "predicting its training labels' prior (their entropy, ln C when balanced; the "
                              "weighted prior's under class weights; each label's binary entropy under BCE) and "
                              "whose validation never clearly beat that guess (a loss 10% below it, or an accuracy "
                              "half a class step above the majority class's share); also a training loss below the "
                              "guess's but not below half of it while validation loss never beat what the training "
                              "prior scores on the validation labels (training rows memorised)"),
    "predicts_mean": ("error", "a regressor whose training loss ends at 90% or more of the loss of always "
                               "predicting a constant (under MSE each output's variance: R^2 under 0.1; under L1 "
                               "the deviation from the median)"),
    "unscaled_target": ("warn", "a regression target whose mean square is 1e4 or more (values in the hundreds "
                                "or more) that the run did not fit (R^2 under 0.9; under a loss without a baseline, a "
                                "validation MAE above a tenth of the median's), whatever the curve did (it "
                                "replaces data_shift: a batch of its largest values spikes the loss)"),
    "unscaled_inputs": ("warn", "an input feature whose mean square over the training set is 1e4 or more "
                                "(raw units: dollars, 0..255 pixels) and a training loss that did not fall "
                                "below half the loss of a guess"),
    "val_mismatch": ("warn", "validation loss never below the loss of a guess, already at the first evaluation, "
                             "while the training loss by then was 10%+ below it, or while every validation accuracy "
                             "was under half the majority class's share: validation from another distribution"),
    "warmup_too_long": ("warn", "the LR the run logged rose all run long and never reached a tenth of optim.lr"),
    "data_shift": ("warn", "the training loss jumped 10x or more between two log lines after it had halved "
                           "(or gone 10% below a guess's), "
                           "stayed up (the median from the jump on 2x or more what it was before) while the "
                           "logged LR was lower than earlier: what the model was fed changed"),
    "lr_too_high": ("warn", "the loss blew up to over 3x its first logged value, or its first logged value is "
                            "over 10x the loss of a guess, or it jumps over 50% between log lines, or over 15% "
                            "while keeping more than half its starting value (a jump counted against the larger "
                            "of the loss and 5% of its start); quotes the LR the run logged"),
    "lr_too_low": ("warn", "less than 10% of the starting loss removed, smooth curve, and the median "
                           "update/weight ratio below 1e-4 (when gradient stats were logged)"),
    "mostly_frozen": ("warn", "90% or more of the parameters frozen and a curve that did not fall by half"),
    "batchnorm_small_batch": ("warn", "a model with BatchNorm layers trained on micro-batches of fewer than 8 "
                                      "samples (accumulation does not enlarge what BatchNorm sees)"),
    "underfitting": ("warn", "more than half the starting loss kept, a plateau (under 5% change over the last "
                             "third), validation loss within 1.2x of training, and not below half a guess's loss "
                             "(when the task's baseline is known); or such a plateau above a tenth of a guess's "
                             "loss behind a hidden layer of 1 or 2 units (the model too small)"),
    "overfitting": ("warn", "validation loss rose for 3+ evaluations after its best, ending 5%+ above it, while "
                            "training loss fell 10%+ (info when early stopping ended the run)"),
    "vanishing_gradients": ("warn", "the first layer's median gradient norm below 1/1000 of the last layer's"),
    "exploding_gradients": ("warn", "the median gradient norm of the last third 10x that of the first third, "
                                    "or 10x train.clip_grad_norm; or, with clipping off, a NaN/inf first seen in a "
                                    "recurrent layer's output or in the backward pass of a model with one"),
    "dead_units": ("warn", "over half of a layer's output units got an all-zero gradient on each of the last 3 "
                           "logged gradient-stats steps (info when the training loss still fell by more than "
                           "half, or ended under half a guess's loss)"),
    "data_bound": ("warn", "over half of the step time spent waiting for the next batch (info from 25%)"),
    "too_short": ("info", "fewer than 6 logged training-loss lines: too short to judge the curves"),
    "healthy": ("info", "no warn or error finding"),
}


def codes_help() -> str:
    """The codes line of ``torchwise diagnose --help``."""
    return "Codes: " + ", ".join(CODES) + "."
