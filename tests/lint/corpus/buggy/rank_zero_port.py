"""A DDP trainer that decays its learning rate where it logs: on rank 0 only."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def main(make_model, loader, epochs=90):
    dist.init_process_group("nccl")
    rank = int(os.environ["RANK"])
    model = DistributedDataParallel(make_model().cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for images, labels in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(images.cuda(rank)), labels.cuda(rank))
            loss.backward()
            optimizer.step()
        if rank == 0:  # expect: TW154
            print(f"epoch {epoch}: loss {loss.item():.3f}")
            scheduler.step()
            torch.save(model.module.state_dict(), "last.pt")
