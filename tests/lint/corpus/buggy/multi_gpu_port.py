"""A classifier ported to several GPUs: the wrapper answers for the model, and the sampler is never
told the epoch."""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def main(train_set, make_model, epochs=30):
    dist.init_process_group("nccl")
    torch.manual_seed(0)
    sampler = DistributedSampler(train_set)  # expect: TW149
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = make_model().to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(epochs):
        model.train()
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: {model.num_classes} classes")  # expect: TW148
    return model


if __name__ == "__main__":
    main(train_set=None, make_model=None)
