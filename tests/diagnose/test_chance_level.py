"""`chance_level`: runs whose classifier ended no better than a guess, each for another reason."""

from __future__ import annotations

import json
import math

import pytest
import torch
from tests.diagnose.planted_runs import blobs, codes, mlp, train
from torch.utils.data import TensorDataset

from torchwise.cli import main


def finding(diagnosis: dict, code: str) -> dict:
    (found,) = [f for f in diagnosis["findings"] if f["code"] == code]
    return found


def test_inputs_of_zeros_are_a_guess_whatever_the_model(tmp_path):
    """A normalisation that zeroes every feature: the labels are all the model has to go on."""
    labels, val_labels = blobs(512, seed=1).tensors[1], blobs(256, seed=2).tensors[1]
    _, diagnosis = train(tmp_path, "zeros", mlp(10, 32, 4), TensorDataset(torch.zeros(512, 10), labels),
                         TensorDataset(torch.zeros(256, 10), val_labels))
    chance = finding(diagnosis, "chance_level")
    assert chance["severity"] == "error" and "underfitting" not in codes(diagnosis, "warn")
    evidence = chance["evidence"]
    assert evidence["num_classes"] == 4 and abs(evidence["prior_entropy"] - math.log(4)) < 0.01  # labels near balanced
    assert abs(evidence["final_train_loss"] - math.log(4)) < 0.01  # the entropy of 4 balanced classes
    assert chance["why"].startswith("the output does not depend on the input")
    assert "look at a few samples and their labels" in chance["fix"]


def test_labels_shuffled_apart_from_their_inputs(tmp_path):
    data = blobs(512, seed=1)
    shuffled = data.tensors[1][torch.randperm(512, generator=torch.Generator().manual_seed(9))]
    _, diagnosis = train(tmp_path, "shuffled", mlp(10, 32, 4), TensorDataset(data.tensors[0], shuffled))
    chance = finding(diagnosis, "chance_level")
    assert chance["evidence"]["final_val_accuracy"] < 1.5 / 4
    assert "shuffled apart" in chance["why"]


def test_a_model_that_beat_a_guess_once_is_not_at_chance(tmp_path):
    """A one-unit bottleneck ends near ln(4) but had reached 41% on the way: underfitting says why."""
    _, diagnosis = train(tmp_path, "bottleneck", mlp(10, 32, 1, 32, 4))
    assert "chance_level" not in codes(diagnosis, "error") and "underfitting" in codes(diagnosis, "warn")


@pytest.mark.slow
def test_digits_blown_up_in_its_first_steps_names_the_learning_rate(tmp_path, capsys):
    """The README's digits run at optim.lr=5: the loss is 3e4 at the first log line, then settles at
    ln(10) with every unit of the first layer dead (which is not a vanishing gradient): the blow-up
    is `lr_too_high`, and the dead units it left behind are its consequence, not a second cause."""
    from pathlib import Path

    config = Path(__file__).resolve().parents[2] / "examples" / "digits.yaml"
    with pytest.raises(SystemExit):
        main(["train", str(config), "optim.lr=5", "train.epochs=5", "--run-dir", str(tmp_path), "--name", "hot",
              "--quiet"])
    diagnosis = json.loads((tmp_path / "hot" / "diagnosis.json").read_text())
    chance = finding(diagnosis, "chance_level")
    assert chance["evidence"]["num_classes"] == 10 and chance["evidence"]["first_train_loss"] > 10 * math.log(10)
    assert "the first steps were so large that the loss blew up" in chance["why"]
    assert chance["fix"].startswith("optim.lr=0.05 (now 5)")
    hot = finding(diagnosis, "lr_too_high")
    assert hot["summary"].startswith("the first logged training loss was") and "(now 5)" in hot["fix"]
    assert not {"dead_units", "vanishing_gradients"} & codes(diagnosis, "warn")
