"""A single-GPU script half-ported to DistributedDataParallel."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main(dataset, epochs=10):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.manual_seed(0)
    device = torch.device("cuda", local_rank)
    sampler = DistributedSampler(dataset)
    train_loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4)
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()  # expect: TW108
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=epochs * len(train_loader))
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        for inputs, targets in train_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(inputs), targets)
            loss.backward()
            optimizer.step()
        scheduler.step()  # expect: TW113
        if dist.get_rank() == 0:
            torch.save(model, f"epoch_{epoch}.pt")  # expect: TW111
    dist.destroy_process_group()


if __name__ == "__main__":
    main(dataset=None)
