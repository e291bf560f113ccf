"""Data-parallel training with DistributedDataParallel, launched by torchrun.

    torchrun --nproc-per-node 4 ddp_train.py
"""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def setup() -> int:
    dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
    return local_rank


def build_dataset() -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(10_000, 32, generator=generator)
    labels = (inputs.sum(dim=1) > 0).long()
    return TensorDataset(inputs, labels)


def main() -> None:
    local_rank = setup()
    torch.manual_seed(1234)
    device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")

    dataset = build_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=1234)
    train_loader = DataLoader(dataset, batch_size=128, sampler=sampler, num_workers=2, pin_memory=True)

    model = nn.Sequential(nn.Linear(32, 256), nn.GELU(), nn.Linear(256, 2)).to(device)
    model = DDP(model, device_ids=[local_rank] if torch.cuda.is_available() else None)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(10):
        # Reshuffle differently every epoch on every rank.
        sampler.set_epoch(epoch)
        model.train()
        epoch_loss = torch.zeros((), device=device)
        for inputs, labels in train_loader:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.detach()
        dist.all_reduce(epoch_loss, op=dist.ReduceOp.AVG)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: mean loss {epoch_loss.item() / len(train_loader):.4f}")
            torch.save(
                {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                "ddp_checkpoint.pt",
            )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
