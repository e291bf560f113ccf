"""A torchvision-style detection model: images of different sizes, a target dict per image, a dict
of losses in train mode and a list of detections in eval mode (built here; no torchvision)."""

from __future__ import annotations

import os
import signal

import pytest
import torch
from tests.helpers import quiet_config, step_losses
from torch import nn
from torch.nn import functional as F
from torch.utils.data import Dataset

import torchwise
from torchwise.data.batch import SampleList, collate, count_samples
from torchwise.runs.folder import read_jsonl


class Shapes(Dataset):
    """An image of its own size per sample; its one box's class is bright (1) or dark (0), and
    the box covers the bright part."""

    def __init__(self, n: int = 24, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.samples = []
        for i in range(n):
            height, width = 12 + 4 * (i % 3), 16 + 4 * (i % 2)
            label = i % 2
            image = torch.rand(3, height, width, generator=generator) * 0.2 + 0.6 * label
            boxes = torch.tensor([[0.0, 0.0, width / 2, height / 2]] * (1 + i % 2))
            labels = torch.full((len(boxes),), label)
            self.samples.append({"images": image, "targets": {"boxes": boxes, "labels": labels}})

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> dict:
        return self.samples[index]


class TinyDetector(nn.Module):
    """forward(images, targets=None): train mode -> {"loss_classifier", "loss_box_reg"}; eval mode ->
    [{"boxes", "labels", "scores"}] per image, as torchvision's detection models answer."""

    def __init__(self, interrupt_after_forward: int | None = None) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.Dropout(0.1), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier, self.box = nn.Linear(8, 2), nn.Linear(8, 4)
        self.interrupt_after_forward, self.forwards = interrupt_after_forward, 0

    def forward(self, images: list[torch.Tensor], targets: list[dict] | None = None):
        if self.training:
            self.forwards += 1
            if self.forwards == self.interrupt_after_forward:
                os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C in the middle of a step
        features = torch.cat([self.backbone(image[None]) for image in images])
        logits, boxes = self.classifier(features), self.box(features)
        if self.training:
            labels = torch.stack([t["labels"][0] for t in targets])
            wanted = torch.stack([t["boxes"][0] / 10 for t in targets])
            return {"loss_classifier": F.cross_entropy(logits, labels), "loss_box_reg": F.l1_loss(boxes, wanted)}
        scores, labels = logits.softmax(-1).max(-1)
        return [{"boxes": b[None] * 10, "labels": c[None], "scores": s[None]}
                for b, c, s in zip(boxes, labels, scores, strict=True)]


def test_images_and_target_dicts_collate_as_per_sample_lists_and_count_as_images():
    batch = collate([Shapes()[i] for i in range(4)])
    assert isinstance(batch["images"], SampleList) and [tuple(t.shape) for t in batch["images"]] == \
        [(3, 12, 16), (3, 16, 20), (3, 20, 16), (3, 12, 20)]
    assert isinstance(batch["targets"], SampleList) and [len(t["boxes"]) for t in batch["targets"]] == [1, 2, 1, 2]
    assert count_samples(batch) == 4  # not the 3 channels of the first image
    # torchvision's reference scripts collate with tuple(zip(*batch)): tuples of images and dicts
    images, targets = tuple(zip(*[(s["images"], s["targets"]) for s in Shapes().samples[:5]], strict=True))
    assert count_samples((images, targets)) == 5


def label_accuracy(detections: list[dict], targets: list[dict]) -> torch.Tensor:
    hits = [float(d["labels"][0] == t["labels"][0]) for d, t in zip(detections, targets, strict=True)]
    return torch.tensor(hits).mean()


@pytest.mark.parametrize("user_loss", [False, True])
def test_a_detection_model_trains_on_its_loss_dict_and_says_which_loss(tmp_path, user_loss):
    loss = (lambda losses, _: sum(losses.values())) if user_loss else None
    model = TinyDetector()
    result = torchwise.fit(model, Shapes(), Shapes(8, seed=1), runs_dir=tmp_path, quiet=True, loss=loss,
                           metrics={"label_accuracy": label_accuracy},
                           config=quiet_config(train={"epochs": 6, "batch_size": 4}, optim={"lr": 0.01}))
    assert result.status == "completed"
    # validated: the loss from a train-mode forward, the user's metric on the eval-mode detections
    final = result.summary["final"]
    assert set(final) >= {"val_loss", "val_label_accuracy"} and "val_accuracy" not in final
    assert final["val_label_accuracy"] == 1.0 and final["val_loss"] < 0.7 * step_losses(result.run_dir)[0]
    losses = step_losses(result.run_dir)
    assert sum(losses[-6:]) < 0.7 * sum(losses[:6])  # measured: 4.56 vs 7.43
    assert result.summary["samples"] == 6 * 24 and result.summary["steps"] == 36
    events = [e for e in read_jsonl(result.run_dir / "events.jsonl") if e.get("event") == "loss_dict"]
    assert len(events) == 1 and events[0]["losses"] == ["loss_box_reg", "loss_classifier"]
    assert events[0]["source"] == ("your loss" if user_loss else "the sum of the model's losses")
    model.eval()
    with torch.no_grad():
        detections = model([s["images"] for s in Shapes().samples[:4]])
    assert [int(d["labels"][0]) for d in detections] == [0, 1, 0, 1]


def test_the_pre_training_check_leaves_mode_buffers_and_rng_bit_equal(tmp_path):
    from torchwise.train.preflight import unchanged

    model = TinyDetector().eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rng = torch.get_rng_state()
    batch = collate([Shapes()[i] for i in range(4)])
    with unchanged(model, training=True):
        model(**batch)
        assert model.training
    assert not model.training and not any(m.training for m in model.modules())
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())
    assert torch.equal(torch.get_rng_state(), rng)


@pytest.mark.slow
def test_a_detection_run_resumes_bit_equal_after_sigint(tmp_path):
    config = quiet_config(train={"epochs": 3, "batch_size": 4}, checkpoint={"enabled": True})
    reference = TinyDetector()
    ref = torchwise.fit(reference, Shapes(), Shapes(8, seed=1), runs_dir=tmp_path / "ref", config=config, quiet=True)
    # The 11th train-mode forward: the pre-training check's 2 (a training batch, and the validation
    # batch's loss), epoch 0's 6 steps and its validation loss, then 2 steps into epoch 1.
    first = torchwise.fit(TinyDetector(interrupt_after_forward=11), Shapes(), Shapes(8, seed=1),
                          runs_dir=tmp_path / "stopped", config=config, quiet=True)
    assert first.status == "interrupted" and first.summary["steps"] == 8
    model = TinyDetector()
    resumed = torchwise.fit(model, Shapes(), Shapes(8, seed=1), resume=first.run_dir, quiet=True)
    assert resumed.status == "completed" and resumed.summary["steps"] == ref.summary["steps"] == 18
    assert resumed.summary["samples"] == ref.summary["samples"] == 72
    assert step_losses(resumed.run_dir)[-10:] == step_losses(ref.run_dir)[-10:]
    assert resumed.summary["final"] == ref.summary["final"]
    for key, value in reference.state_dict().items():
        assert torch.equal(model.state_dict()[key], value), key
