"""A DDP trainer whose validation is split across ranks and read back without a reduction."""

import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


@torch.no_grad()
def validate(model, val_loader):
    model.eval()
    correct = total = 0
    for images, labels in val_loader:
        correct += (model(images).argmax(1) == labels).sum().item()
        total += labels.numel()
    return correct / total


def build_val_loader(val_set):
    val_sampler = DistributedSampler(val_set, shuffle=False)  # expect: TW155
    return DataLoader(val_set, batch_size=256, sampler=val_sampler)
