"""What the model could not learn with, from ``facts.json``: `mostly_frozen` (the parameters that
train are too few for a curve that did not fall), `batchnorm_small_batch` (BatchNorm layers
that see micro-batches too small for their statistics) and `underfitting` through a layer too
narrow to carry the input (`too_narrow`)."""

from __future__ import annotations

from typing import Any

from torchwise.diagnose import thresholds as T
from torchwise.diagnose.baselines import guess_loss
from torchwise.diagnose.curves import settled_alike
from torchwise.diagnose.run_finding import RunFinding
from torchwise.runs.reader import RunRecord


def mostly_frozen(record: RunRecord, measures: dict[str, Any] | None) -> RunFinding | None:
    counts = record.json_file("facts.json").get("parameters") or {}
    trainable, frozen = counts.get("trainable"), counts.get("frozen")
    if not isinstance(trainable, int) or not isinstance(frozen, int) or trainable + frozen == 0 or measures is None:
        return None
    share = frozen / (trainable + frozen)
    if share < T.FROZEN_SHARE or measures["drop"] >= T.SLOW_DROP:
        return None  # few frozen, or a head on a frozen backbone that does learn (fine-tuning)
    return RunFinding(
        "mostly_frozen", "warn",
        f"{share:.1%} of the parameters are frozen: {trainable:,} train, {frozen:,} do not, and the training "
        f"loss went from {measures['start']:.4g} only to {measures['end']:.4g}",
        why=f"only {trainable:,} parameters have requires_grad=True, and the curve shows they cannot fit the "
            "data on their own: the layers that would have to change are frozen",
        fix="unfreeze the layers that must adapt (param.requires_grad_(True) on them, e.g. the last blocks of "
            "the backbone, and its norms); check that a freezing loop matched only the names you meant; "
            "`torchwise summary` counts the frozen parameters per layer",
        evidence={"trainable_parameters": trainable, "frozen_parameters": frozen, "frozen_share": round(share, 4),
                  "train_loss_start": round(measures["start"], 4), "train_loss_end": round(measures["end"], 4)})


def batchnorm_small_batch(record: RunRecord) -> RunFinding | None:
    facts = record.json_file("facts.json")
    layers, batch = facts.get("batchnorm_layers") or [], facts.get("batch_size")
    if not layers or not isinstance(batch, int) or batch >= T.BATCHNORM_MIN_BATCH:
        return None
    accumulate = (record.config.get("train") or {}).get("accumulate") or 1
    shown = ", ".join(f"'{name}'" for name in layers[:4]) + (", ..." if len(layers) > 4 else "")
    return RunFinding(
        "batchnorm_small_batch", "warn",
        f"{len(layers)} BatchNorm layer(s) ({shown}) normalise over micro-batches of {batch} samples"
        + (f" (train.accumulate={accumulate} does not change what they see)" if accumulate > 1 else ""),
        why=f"BatchNorm normalises each feature by the mean and variance of the {batch} samples in the batch: "
            "statistics that noisy make every step's output depend on which samples share the batch, and "
            "the running averages used at evaluation do not match what training saw; the normalisation "
            "layers are the cause here, not a cure",
        fix="train.batch_size=32 or more with train.accumulate=1 when memory allows; else replace BatchNorm "
            "with nn.GroupNorm or nn.LayerNorm, which do not depend on the batch; or freeze BatchNorm's "
            "statistics (module.eval() on the BatchNorm layers) when fine-tuning",
        evidence={"batchnorm_layers": layers, "batch_size": batch, "accumulate": accumulate})


def too_narrow(record: RunRecord, measures: dict[str, Any] | None) -> RunFinding | None:
    """`underfitting` whose cause the model's shape shows: every sample squeezed through a layer of
    one or two units, a plateau, validation like training, and a loss far from fitted."""
    narrow = record.json_file("facts.json").get("narrowest_layer") or {}
    width, guess = narrow.get("width"), guess_loss(record)
    if not isinstance(width, int) or width > T.NARROW_WIDTH or measures is None or guess is None:
        return None
    if not settled_alike(measures) or measures["end"] < T.NARROW_UNFITTED * guess[1]:
        return None
    return RunFinding(
        "underfitting", "warn",
        f"the model is too small for its data: every sample passes through layer '{narrow.get('name')}' of "
        f"{width} unit(s), and the training loss settled at {measures['end']:.4g} "
        f"({measures['end'] / guess[1]:.2g}x {guess[0]}, {guess[1]:.4g})",
        why=f"a layer of {width} unit(s) carries {width} number(s) per sample to the layers after it: whatever "
            "the input holds beyond that is lost, so training and validation loss stop alike on a plateau well "
            "above a fit; more steps or another learning rate do not change what the layer can carry",
        fix=f"widen layer '{narrow.get('name')}' (a hidden size of tens to hundreds; for an autoencoder, a code "
            "size the data needs) and check `torchwise summary` for other layers that squeeze the input",
        evidence={"narrowest_layer": narrow.get("name"), "width": width, "guess_loss": float(f"{guess[1]:.4g}"),
                  "final_train_loss": round(measures["end"], 4),
                  "loss_to_guess": float(f"{measures['end'] / guess[1]:.2g}"),
                  "tail_change": round(measures["tail_change"], 4), "val_end": measures["val_end"]})
