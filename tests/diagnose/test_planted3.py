"""`diagnose` on round 3's working half (benchmarks/diagnose_planted/dev3.py): the baselines of
the loss that ran, the data facts a custom Dataset's first epoch gave, and the causes they name,
each by its code and evidence, with what it replaces."""

from __future__ import annotations

import json

import pytest
from tests.diagnose.test_planted import planted


def warned(diagnosis: dict) -> list[str]:
    return [f["code"] for f in diagnosis["findings"] if f["severity"] in ("warn", "error")]


def test_labels_joined_to_other_rows_are_chance_even_when_the_training_loss_memorised_them(tmp_path):
    run_dir, diagnosis = planted(tmp_path, "fraud_labels_misjoined", "dev3")
    assert warned(diagnosis) == ["chance_level"]  # it read healthy before round 3
    assert sum(json.loads((run_dir / "facts.json").read_text())["val_class_counts"]) == 512
    evidence = diagnosis["findings"][0]["evidence"]
    assert evidence["memorised"] is True and evidence["majority_share"] > 0.95
    assert evidence["final_train_loss"] < 0.9 * evidence["prior_entropy"] <= evidence["best_val_loss"]
    assert "memorising training rows" in diagnosis["findings"][0]["why"]


def test_a_target_in_dollars_is_named_whatever_the_curve_did(tmp_path):
    run_dir, diagnosis = planted(tmp_path, "price_in_dollars", "dev3")
    assert "unscaled_target" in warned(diagnosis)  # it read diverging, exploding_gradients before
    finding = next(f for f in diagnosis["findings"] if f["code"] == "unscaled_target")
    target = json.loads((run_dir / "facts.json").read_text())["target"]
    assert target["mean"] > 1e5 and finding["evidence"]["target_max"] == target["max"]
    assert target["max"] < 1000 * target["min"]  # under three decades: no log(y) first
    assert finding["fix"].startswith("standardise the target with the training set's mean")


def test_a_second_shard_in_raw_pixels_is_a_data_shift_after_a_loss_below_a_guess(tmp_path):
    run_dir, diagnosis = planted(tmp_path, "siamese_second_shard_raw_pixels", "dev3")
    facts = json.loads((run_dir / "facts.json").read_text())
    assert facts["observed_samples"] == 2048 and "class_counts" in facts  # a stream: seen batch by batch
    assert "data_shift" in warned(diagnosis)
    assert "diverging" not in warned(diagnosis)  # the loss ended high because of the pixels, not the LR
    (shift,) = [f for f in diagnosis["findings"] if f["code"] == "data_shift"]
    assert shift["evidence"]["loss_after"] > 10 * shift["evidence"]["loss_before"]


def test_a_one_factor_recommender_underfits_and_its_embeddings_have_no_dead_rows(tmp_path):
    run_dir, diagnosis = planted(tmp_path, "recommender_dim_1", "dev3")
    facts = json.loads((run_dir / "facts.json").read_text())
    assert facts["embedding_layers"] == ["user", "item", "user_bias", "item_bias"]
    assert facts["target"]["outputs"] == 1 and facts["observed_samples"] == 16_000
    assert "underfitting" in warned(diagnosis) and "dead_units" not in warned(diagnosis)


def test_a_multilabel_warmup_and_its_baseline(tmp_path):
    run_dir, diagnosis = planted(tmp_path, "tags_bert_warmup", "dev3")
    facts = json.loads((run_dir / "facts.json").read_text())
    assert facts["loss"] == {"source": "task", "kind": "bce"} and facts["binary_targets"]["outputs"] == 8
    assert warned(diagnosis) == ["warmup_too_long"]


def test_a_healthy_multilabel_cnn_and_a_healthy_siamese_read_healthy(tmp_path):
    for name in ("healthy_digit_properties_cnn", "healthy_siamese"):
        _, diagnosis = planted(tmp_path, name, "dev3")
        assert diagnosis["healthy"], (name, diagnosis)


@pytest.mark.parametrize("name", ["forecast_split_separately", "forecast_sensor_gap",
                                  "conv_forecaster_batchnorm_batch_1"])
def test_the_forecasters_get_their_planted_cause(tmp_path, name):
    import importlib

    expected = importlib.import_module("benchmarks.diagnose_planted.dev3").CASES[name][0]
    _, diagnosis = planted(tmp_path, name, "dev3")
    assert warned(diagnosis)[0] == expected
