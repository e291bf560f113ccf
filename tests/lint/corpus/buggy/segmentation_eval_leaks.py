"""Semantic segmentation with a validation pass every few hundred steps, its settings in a dict
that lacks one key the validation reads, and an integer array divided in place."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

settings = {"crop_size": 473, "ignore_index": 255, "val_every": 500}


def mean_iou(logits, masks, classes):
    predictions = logits.argmax(1)
    ious = []
    for c in range(classes):
        intersection = ((predictions == c) & (masks == c)).sum()
        union = ((predictions == c) | (masks == c)).sum()
        ious.append(intersection / union.clamp(min=1))
    return torch.stack(ious).mean()


def pixel_accuracy(hits, totals):
    counts = np.zeros(len(totals), dtype=np.int64)
    counts += hits
    counts /= totals  # expect: TW145
    return counts


def validate(model, val_loader, classes):
    model.eval()
    scores = [torch.zeros(settings["val_size"])]  # expect: TW143
    for images, masks in val_loader:  # expect: TW104
        scores.append(mean_iou(model(images), masks, classes))
    return torch.stack(scores).mean()


def train(model, train_set, val_set, classes, steps=10_000, accumulate=4):
    torch.manual_seed(1)
    train_loader = DataLoader(train_set, batch_size=8, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=8, drop_last=True)  # expect: TW147
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-5)
    model.train()
    step = 0
    while step < steps:
        for images, masks in train_loader:
            loss = F.cross_entropy(model(images), masks, ignore_index=settings["ignore_index"])
            loss.backward()  # expect: TW116
            if (step + 1) % accumulate == 0:
                optimizer.step()
                optimizer.zero_grad()
            if step % settings["val_every"] == 0:
                print(f"step {step}: val mIoU {validate(model, val_loader, classes):.3f}")  # expect: TW105
            step += 1


def load_for_inference(model, path):
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model
